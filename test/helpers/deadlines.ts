// The one deadline of the tests' waits, in a module of its own so that helpers which start processes
// (serve-process.ts, serve-harness.ts) share it without loading the CLI that state.ts brings in.

/**
 * The deadline for a condition that comes by itself (a count reaching the dashboard, a key reaching a
 * peer, a log line of a child process, Redis answering again): generous, so it only fails a hung
 * test, never a slow machine. A time the product promises is a bench's claim, not this. A test at
 * `nice -n 15` beside benches at `nice -n -10` gets a few percent of a core (a `serve --threads 2`
 * start that takes 1 s of CPU took 132 s so), and 20 s was not enough there; test/run.ts's deadline
 * per file (15 minutes) stays the bound of a whole file.
 */
export const EVENTUALLY_MS = 120_000;

/** The deadline for a child process to start listening: the 132 s start above, with room. */
export const STARTED_MS = 300_000;
