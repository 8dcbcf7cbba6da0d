// Quotas exact across threads (CONTRACT 4 and 10) with a store that offers the threads neither
// counters in shared memory (shared-quota.ts) nor a server of their own to reach (Redis:
// redis-gate.ts), such as a store given to startService: the main thread's gate is the one
// authority. A worker asks it to
// admit a key and to settle the ticket; the main thread counts, and its usage log (group commit
// included) is the one writer, so `strict` keeps its promise for every thread. The checks that need
// no counter (a missing or malformed key) are answered in the worker.
// Messages are batched both ways: what one turn of the event loop asks (every request parsed in it)
// leaves in one message, and the answers come back in one, so a busy thread pays for one wake-up of
// the other side per turn, not per request.
import type { MessagePort } from 'node:worker_threads';
import { isWellFormedKey } from '../access/key-format.ts';
import { errorBody } from '../errors.ts';
import type { Admitter } from '../http/app.ts';
import type { Gate } from '../quota/gate.ts';
import type { QuotaTicket } from '../quota/counting-store.ts';
import { StoreUnavailableError } from '../quota/counting-store.ts';
import { UNAUTHORIZED, type Headers } from '../quota/responses.ts';

/** Worker -> main: admit [0, id, key]; settle [1, ticket, status]. */
type Ask = [0, number, string] | [1, number, number];
/**
 * Main -> worker: admitted [0, id, ticket, headers, headers if 200, headers otherwise]; refused
 * [1, id, status, body, headers]; settled [2, ticket, ok].
 */
type Reply = [0, number, number, Headers, Headers, Headers] | [1, number, number, string, Headers] | [2, number, boolean];

/**
 * The status a ticket is settled with when its thread died before answering: like a 304 it gives the
 * unit back and counts nothing (quota/counting-store.ts), since nothing reached the client.
 */
const NOT_SENT = 304;

/** Collects messages and posts them as one array at the end of the current turn of the event loop. */
class Batch<T> {
  private items: T[] = [];
  constructor(private readonly port: MessagePort) {}
  push(item: T): void {
    if (this.items.length === 0) setImmediate(this.flush);
    this.items.push(item);
  }
  private readonly flush = () => {
    const items = this.items;
    this.items = [];
    this.port.postMessage(items);
  };
}

/** Main side of one worker's link. `release()` gives back whatever that worker still held. */
export function serveGate(port: MessagePort, gate: Gate): { release(): void } {
  const open = new Map<number, QuotaTicket>();
  const out = new Batch<Reply>(port);
  let next = 0;
  const admitted = (id: number, a: Awaited<ReturnType<Gate['admit']>>): void => {
    if (!a.ok) return out.push([1, id, a.status, a.body, a.headers]);
    const ticket = ++next;
    open.set(ticket, a.ticket);
    out.push([0, id, ticket, a.headers, gate.quotaHeaders(a.ticket, 200), gate.quotaHeaders(a.ticket, 0)]);
  };
  const failed = (id: number) => out.push([1, id, 500, errorBody('INTERNAL_ERROR'), {}]);
  const ask = (m: Ask): void => {
    if (m[0] === 0) {
      const a = gate.admit(m[2]);
      if (a instanceof Promise) void a.then((x) => admitted(m[1], x), () => failed(m[1]));
      else admitted(m[1], a);
      return;
    }
    const t = open.get(m[1]);
    if (t === undefined) return;
    open.delete(m[1]);
    const durable = gate.settle(t, m[2]);
    // Only a 200 waits in the worker (RemoteGate.settle); its answer leaves once this is sent.
    if (m[2] !== 200) return;
    if (durable === null) out.push([2, m[1], true]);
    else durable.then(() => out.push([2, m[1], true]), () => out.push([2, m[1], false]));
  };
  port.on('message', (asks: readonly Ask[]) => {
    for (const m of asks) {
      try {
        ask(m);
      } catch {
        if (m[0] === 0) failed(m[1]); // a bug in the gate: that request gets a 500, the others go on
      }
    }
  });
  return {
    release() {
      for (const t of open.values()) gate.settle(t, NOT_SENT);
      open.clear();
      port.close();
    },
  };
}

interface RemoteTicket {
  readonly id: number;
  readonly if200: Headers;
  readonly otherwise: Headers;
}

/** Worker side: the pipeline's Admitter over the link. */
export class RemoteGate implements Admitter {
  private next = 0;
  private readonly out: Batch<Ask>;
  private readonly admits = new Map<number, (a: Awaited<ReturnType<Admitter['admit']>>) => void>();
  private readonly settles = new Map<number, { resolve(): void; reject(err: Error): void }>();

  constructor(port: MessagePort) {
    this.out = new Batch<Ask>(port);
    port.on('message', (replies: readonly Reply[]) => {
      for (const m of replies) this.reply(m);
    });
  }

  private reply(m: Reply): void {
    if (m[0] === 2) {
      const waiting = this.settles.get(m[1]);
      this.settles.delete(m[1]);
      if (m[2]) waiting?.resolve();
      else waiting?.reject(new StoreUnavailableError('usage could not be recorded'));
      return;
    }
    const done = this.admits.get(m[1]);
    this.admits.delete(m[1]);
    if (done === undefined) return;
    if (m[0] === 0) done({ ok: true, ticket: { id: m[2], if200: m[4], otherwise: m[5] } satisfies RemoteTicket, headers: m[3] });
    else done({ ok: false, status: m[2], body: m[3], headers: m[4] });
  }

  admit(apiKey: string | undefined): ReturnType<Admitter['admit']> {
    if (typeof apiKey !== 'string' || !isWellFormedKey(apiKey)) return UNAUTHORIZED;
    const id = ++this.next;
    return new Promise((resolve) => {
      this.admits.set(id, resolve);
      this.out.push([0, id, apiKey]);
    });
  }

  settle(ticket: unknown, status: number): Promise<void> | null {
    const t = ticket as RemoteTicket;
    this.out.push([1, t.id, status]);
    if (status !== 200) return null;
    // Every 200 waits for the main thread: with `strict` its record is then on disk (CONTRACT 4).
    return new Promise((resolve, reject) => this.settles.set(t.id, { resolve, reject }));
  }

  quotaHeaders(ticket: unknown, status: number): Headers {
    const t = ticket as RemoteTicket;
    return status === 200 ? t.if200 : t.otherwise;
  }
}
