// V8 flags the `serve` command sets for its own process (issue 19), never the library's embedding
// API: a host's process (a test suite that starts the server in-process) keeps its own V8 settings.
// --external-memory-accounted-in-global-limit: the load's ArrayBuffers (its scratch blocks, the
// arenas) count toward V8's global heap limit instead of setting off a marking of the whole heap
// each time they grow by a fixed step. A first start at 100k on Node 26 started 40-41 markings
// before `listening on`, 22-27 of them for external memory, and 13-17 with the flag; its CPU went
// from 41.5-45.2 to 31.0-35.9 s (README, "What bounds the first start"). V8 13.6 (Node 24) has the
// flag; 11.3 (Node 20) and 12.4 (Node 22) have not, and print "unrecognized flag" when it is set.
import v8 from 'node:v8';

/** Whether a V8 of this version (`process.versions.v8`: "major.minor.build...") has the flag: 13.6 and later. */
export function hasExternalMemoryFlag(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map((n) => Number.parseInt(n, 10) || 0);
  return major > 13 || (major === 13 && minor >= 6);
}

/** Sets `serve`'s V8 flags where this V8 has them: first thing, before the data loads and any thread starts. */
export function setServeFlags(version: string = process.versions.v8): void {
  if (hasExternalMemoryFlag(version)) v8.setFlagsFromString('--external-memory-accounted-in-global-limit');
}
