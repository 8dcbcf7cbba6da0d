// The one deadline of the tests' waits, in a module of its own so that helpers which start processes
// (serve-process.ts, serve-harness.ts) share it without loading the CLI that state.ts brings in.

/**
 * The deadline for a condition that comes by itself (a count reaching the dashboard, a key reaching a
 * peer, a log line of a child process, Redis answering again): generous, so it only fails a hung
 * test, never a slow machine. A time the product promises is a bench's claim, not this.
 */
export const EVENTUALLY_MS = 20_000;
