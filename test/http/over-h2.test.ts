// The black-box suites once more, over HTTP/2 on TLS (CONTRACT 5, issue 14): the same tests through
// node:http2 instead of fetch over HTTP/1.1. Each test file runs in its own process, so this one's
// choice of protocol reaches only the suites it imports.
import { useProtocol } from '../helpers/server.ts';

useProtocol('h2');
await import('./pipeline.test.ts');
await import('./resources.test.ts');
await import('./compress.test.ts');
await import('./conditional.test.ts');
