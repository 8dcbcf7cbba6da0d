// Entry point of the single executable (`npm run build:exe`): the whole CLI, with the sample data
// carried inside the executable, and no node_modules.
import './unpack-data.ts'; // first: sets the module URL that src/config.ts resolves ../data against
import { run } from '../cli/main.ts';

// A SEA's main script is CommonJS: no top-level await.
run().catch((err: unknown) => {
  process.stderr.write(`celebrity-api: ${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
