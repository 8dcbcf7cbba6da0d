// Whether this Node and this platform can give one port to several threads (CONTRACT 10), and how
// many threads `--threads N|auto` asks for. Each worker thread listens on the same port with net's
// `reusePort` (SO_REUSEPORT): the kernel then spreads new connections over the threads' sockets.
import { availableParallelism } from 'node:os';

/** What `--threads` needs, as the refusal names it. */
export const THREADS_NEED = 'Node 22.12 or later (23.1 on the 23 line) on Linux';

/**
 * `reusePort` came in Node 23.1.0 and was backported to 22.12.0 (nodejs/node#55408, net.md
 * `server.listen(options)`); older versions ignore the option and a second bind fails with
 * EADDRINUSE. Of the platforms libuv supports it on, Linux is the one this project tests and the one
 * whose kernel balances connections over the sockets of a port.
 */
export function sharesPorts(version: string = process.versions.node, platform: NodeJS.Platform = process.platform): boolean {
  if (platform !== 'linux') return false;
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
}

/** One line for stderr: what is needed, and what runs here. */
export function refusal(version: string = process.versions.node, platform: NodeJS.Platform = process.platform): string {
  return `--threads above 1 needs ${THREADS_NEED}: this is Node ${version} on ${platform}`;
}

/** The largest `--threads N`: well past any core count this runs on, far below a runaway value. */
export const MAX_THREADS = 256;

export type ThreadsSetting = number | 'auto';

/**
 * The number of threads to run. `auto` is every core where ports can be shared and 1 elsewhere (with
 * `fellBack` set, so the caller logs why); an explicit N above 1 where they cannot be shared is
 * refused with `refusal()` (exit 2 for `serve`).
 */
export function threadCount(setting: ThreadsSetting, cores: number = availableParallelism(), shares: boolean = sharesPorts()): { count: number; fellBack: boolean } | { error: string } {
  if (setting === 'auto') return shares ? { count: Math.max(1, Math.min(cores, MAX_THREADS)), fellBack: false } : { count: 1, fellBack: cores > 1 };
  if (setting > 1 && !shares) return { error: refusal() };
  return { count: setting, fellBack: false };
}
