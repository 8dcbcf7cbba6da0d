// Concurrent HTTP load for the many-instance tests: requests spread round-robin over several servers,
// all started at once (bounded per server by the agent's sockets), with their statuses in order.
import http from 'node:http';

export interface LoadClient {
  /**
   * GETs every path at once (path i goes to server i mod n, with `key`, or keys[i] when a list);
   * resolves with each status (0: no answer).
   */
  burst(paths: readonly string[], key: string | readonly string[]): Promise<number[]>;
  /** GET one path on server `i`; the status and the parsed body (status 0: no answer, and why). */
  get(i: number, path: string, key?: string): Promise<{ status: number; body: any; reason?: string }>;
  /** 200 answers received from each server so far. */
  readonly served: number[];
  /**
   * Requests that got no answer (status 0), by why: the socket error's code (ECONNREFUSED: nothing
   * listens, the server is gone; ECONNRESET: it closed a connection mid-request), `timeout` (no answer
   * within 10 s) or `response aborted` (the answer stopped mid-body).
   */
  readonly noAnswer: Record<string, number>;
  /**
   * Each request that got no answer: the server (index), why (as in noAnswer), whether its socket was a
   * kept-alive one reused (and how long it had been idle), and when (performance.now()).
   */
  readonly lost: { server: number; why: string; reused: boolean; idleMs: number | null; retried: boolean; at: number }[];
  close(): void;
}

/** No answer within this long is a request given up on (a hung server). */
const REQUEST_TIMEOUT_MS = 10_000;

export function loadClient(urls: readonly string[], socketsPerServer = 64): LoadClient {
  const agents = urls.map(() => new http.Agent({ keepAlive: true, maxSockets: socketsPerServer }));
  // When each kept-alive socket went back to its agent's free list (for the idle time of a lost request).
  const freed = new WeakMap<object, number>();
  for (const a of agents) a.on('free', (socket: object) => freed.set(socket, performance.now()));
  const served = urls.map(() => 0);
  const noAnswer: Record<string, number> = {};
  const lost: LoadClient['lost'] = [];
  const one = (i: number, path: string, key?: string, retried = false): Promise<{ status: number; body: any; reason?: string }> =>
    new Promise((resolve) => {
      let timedOut = false;
      let idleMs: number | null = null;
      const none = (why: string) => {
        noAnswer[why] = (noAnswer[why] ?? 0) + 1;
        lost.push({ server: i % urls.length, why, reused: req.reusedSocket, idleMs, retried, at: performance.now() });
        resolve({ status: 0, body: null, reason: why });
      };
      const url = new URL(path, urls[i % urls.length]);
      // Sent again: on a connection of its own (agent: false), not on the next pooled socket, which
      // the server may have closed as idle just as well (all the sockets a burst left behind expire together).
      const req = http.get(url, { agent: retried ? false : agents[i % urls.length], headers: key === undefined ? {} : { 'x-api-key': key } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          if (res.statusCode === 200) served[i % urls.length]!++;
          resolve({ status: res.statusCode!, body: text.startsWith('{') ? JSON.parse(text) : text });
        });
        res.on('error', () => none('response aborted'));
      });
      req.on('socket', (socket) => {
        const at = freed.get(socket);
        if (at !== undefined) idleMs = Math.round(performance.now() - at);
      });
      req.setTimeout(REQUEST_TIMEOUT_MS, () => {
        timedOut = true;
        req.destroy();
      });
      // A server killed mid-request (the SIGKILL test) resets its sockets: no answer, status 0. A kept-alive
      // socket the server closed as idle (keepAliveTimeout 5 s: Node 20 closes at ~6 s, and its agent
      // never closes one first) just as this request went out on it is reset too, before the server
      // read a byte of it: sent again once on a new connection, as Node's documentation advises
      // (req.reusedSocket) and RFC 9110 9.2.2 allows for a GET. Cluster test 3 lost 2 of 9 requests that
      // way: its burst reuses sockets the previous test's burst left idle 5.6-5.7 s before, and the
      // resend went out on another of them, closed at the same instant (load.test.ts).
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (!retried && !timedOut && req.reusedSocket && err.code === 'ECONNRESET') resolve(one(i, path, key, true));
        else none(timedOut ? 'timeout' : (err.code ?? err.message));
      });
    });
  return {
    burst: async (paths, key) => (await Promise.all(paths.map((p, i) => one(i, p, typeof key === 'string' ? key : key[i])))).map((r) => r.status),
    get: one,
    served,
    noAnswer,
    lost,
    close: () => agents.forEach((a) => a.destroy()),
  };
}

/** How many of each status. */
export function tally(statuses: readonly number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
}
