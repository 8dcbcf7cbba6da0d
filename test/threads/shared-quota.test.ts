// src/threads/shared-quota.ts: a worker's gate reserving in shared memory, against the main thread's
// table over a real MessageChannel (both ends in this thread: the Atomics are the same operations).
// The end-to-end exactness over real sockets and threads is in threads.test.ts.
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { setImmediate as turn } from 'node:timers/promises';
import { openGate, type Gate } from '../../src/quota/gate.ts';
import { openStore } from '../../src/store/open.ts';
import { QuotaTable, SharedGate } from '../../src/threads/shared-quota.ts';
import { Bell } from '../../src/threads/ring.ts';
import { readUsageFiles, storeMetric } from '../helpers/gate.ts';
import { FAST_SCRYPT, tempState } from '../helpers/state.ts';
import { eventually } from '../helpers/serve-harness.ts';

const NOW = Date.parse('2026-11-10T12:00:00Z');
let now = NOW;
const clock = () => now;

interface Side {
  gate: SharedGate;
  release(): void;
}

let gate: Gate;
let table: QuotaTable;
let channels: MessageChannel[];

/** A worker's side: a SharedGate on its own channel to the table. */
function worker(bell = new Bell()): Side {
  const channel = new MessageChannel();
  channels.push(channel);
  const link = table.link(channel.port1, bell);
  return { gate: new SharedGate({ ...link.setup, port: channel.port2 }, clock), release: link.release };
}

/** admit(), awaited when it asks the main thread; the answer says whether it had to. */
async function admit(side: Side, key: string): Promise<{ status: number; asked: boolean; ticket: unknown }> {
  const a = side.gate.admit(key);
  const asked = a instanceof Promise;
  const r = await a;
  return { status: r.ok ? 200 : r.status, asked, ticket: r.ok ? r.ticket : null };
}

beforeEach(async () => {
  now = NOW;
  channels = [];
  const store = await openStore({ state: 'memory', role: 'server', clock });
  gate = openGate({ store, clock });
  table = QuotaTable.for(gate, clock)!;
});

afterEach(async () => {
  for (const c of channels) (c.port1.close(), c.port2.close());
  await gate.close();
});

describe('SharedGate', () => {
  it('a key asks the main thread once; then units are reserved without a message (admit answers at once)', async () => {
    const { key } = await gate.accounts.create({ email: 'a@example.com', plan: 'free', password: 'correct horse battery' });
    const w = worker();
    const first = await admit(w, key);
    assert.deepEqual([first.status, first.asked], [200, true]);
    const second = await admit(w, key);
    assert.deepEqual([second.status, second.asked], [200, false]);
    assert.equal(w.gate.settle(first.ticket, 200), null); // memory store: nothing waits for a disk
    assert.equal(w.gate.settle(second.ticket, 200), null);
    await turn();
    await turn();
    assert.equal((await gate.usage.get('a@example.com')).used, 2);
  });

  it('a report that rings the bell in the turn that also asks for a key -> the bell is looked at, not left rung with no look to come', async () => {
    const due: (() => void)[] = [];
    const bell = new Bell((look) => void due.push(look));
    const look = () => {
      for (let i = 0; i < 10 && due.length > 0; i++) due.splice(0).forEach((f) => f());
    };
    const rung = () => new Int32Array(bell.memory)[0];
    const { key } = await gate.accounts.create({ email: 'h@example.com', plan: 'enterprise', password: 'correct horse battery' });
    const other = (await gate.accounts.create({ email: 'i@example.com', plan: 'enterprise', password: 'correct horse battery' })).key;
    const w = worker(bell);
    w.gate.settle((await admit(w, key)).ticket, 200);
    await turn();
    await turn();
    look();
    assert.equal(rung(), 0, 'all read, the bell cleared');
    // One turn: a 200 of a key known (its report rings the bell) and a key to ask for, in one message.
    const known = await admit(w, key);
    assert.equal(known.asked, false);
    w.gate.settle(known.ticket, 200);
    const asking = w.gate.admit(other);
    assert.ok(asking instanceof Promise);
    await asking;
    await turn();
    look();
    assert.equal(rung(), 0, 'the bell that came with the key was looked at: later reports ring it again');
  });

  it('two workers, 150 requests on a free key (100 a month) -> exactly 100 admitted; the 100 counted, the refusals counted as rejected', async () => {
    const { key } = await gate.accounts.create({ email: 'b@example.com', plan: 'free', password: 'correct horse battery' });
    const [a, b] = [worker(), worker()];
    const tickets: [Side, unknown][] = [];
    let refused = 0;
    // All admitted before any settles: every unit is held at once, as under concurrent load.
    for (let i = 0; i < 150; i++) {
      const side = i % 2 === 0 ? a : b;
      const r = await admit(side, key);
      if (r.status === 200) tickets.push([side, r.ticket]);
      else (assert.equal(r.status, 429), refused++);
    }
    assert.deepEqual([tickets.length, refused], [100, 50]);
    for (const [side, t] of tickets) side.gate.settle(t, 200);
    const usage = await gate.usage.get('b@example.com'); // reads what the workers reported but the table had not read yet
    assert.equal(usage.used, 100);
    assert.equal(usage.daily[0]!.rejected, 50);
  });

  it('a unit given back (a 404, a 304) is reserved again; only 200s count', async () => {
    const { key } = await gate.accounts.create({ email: 'c@example.com', plan: 'free', password: 'correct horse battery' });
    await gate.usage.set('c@example.com', 99);
    const w = worker();
    const one = await admit(w, key);
    assert.equal((await admit(w, key)).status, 429, 'the 100th unit is held');
    w.gate.settle(one.ticket, 404);
    const again = await admit(w, key);
    assert.equal(again.status, 200, 'given back by the 404');
    w.gate.settle(again.ticket, 304);
    const last = await admit(w, key);
    w.gate.settle(last.ticket, 200);
    assert.equal((await admit(w, key)).status, 429);
    assert.equal((await gate.usage.get('c@example.com')).used, 100);
  });

  it('a key revoked or rotated -> the next request is a 401 (the worker drops the keys it kept)', async () => {
    const { key } = await gate.accounts.create({ email: 'd@example.com', plan: 'enterprise', password: 'correct horse battery' });
    const w = worker();
    assert.equal((await admit(w, key)).status, 200);
    assert.equal((await admit(w, key)).asked, false);
    const rotated = await gate.accounts.rotateKey('d@example.com', 'correct horse battery');
    assert.equal((await admit(w, key)).status, 401);
    assert.equal((await admit(w, rotated.key)).status, 200);
    await gate.accounts.revokeKey('d@example.com');
    assert.equal((await admit(w, rotated.key)).status, 401);
  });

  it('a plan changed -> the next request counts against the new quota', async () => {
    const { key } = await gate.accounts.create({ email: 'e@example.com', plan: 'enterprise', password: 'correct horse battery' });
    const w = worker();
    for (let i = 0; i < 3; i++) w.gate.settle((await admit(w, key)).ticket, 200);
    await gate.accounts.setPlan('e@example.com', 'free');
    await gate.usage.set('e@example.com', 100);
    assert.equal((await admit(w, key)).status, 429);
  });

  it('usage set while units are held -> the shared count moves by as much; the held units stay held', async () => {
    const { key } = await gate.accounts.create({ email: 'f@example.com', plan: 'free', password: 'correct horse battery' });
    const w = worker();
    const held = await admit(w, key); // 1 held
    await gate.usage.set('f@example.com', 98); // 98 counted + 1 held
    const next = await admit(w, key); // the 100th
    assert.equal(next.status, 200);
    assert.equal((await admit(w, key)).status, 429);
    w.gate.settle(held.ticket, 200);
    w.gate.settle(next.ticket, 200);
    assert.equal((await gate.usage.get('f@example.com')).used, 100);
  });

  it('the next month -> a new count, from what the store holds for it', async () => {
    const { key } = await gate.accounts.create({ email: 'g@example.com', plan: 'free', password: 'correct horse battery' });
    await gate.usage.set('g@example.com', 100);
    const w = worker();
    assert.equal((await admit(w, key)).status, 429);
    now = Date.parse('2026-12-01T00:00:00Z');
    const r = await admit(w, key);
    assert.deepEqual([r.status, r.asked], [200, true]);
    w.gate.settle(r.ticket, 200);
    assert.equal((await gate.usage.get('g@example.com')).used, 1);
  });

  it('past the first 1,024 slots (the shared table grows) -> workers started before see the new slots: reserved on one, refused on the other', async () => {
    const { key } = await gate.accounts.create({ email: 'm@example.com', plan: 'free', password: 'correct horse battery' });
    const one = worker();
    const two = worker();
    // A slot per account month: 1,100 months, each asked of the main thread once.
    const month = (i: number) => Date.UTC(2026, 10 + i, 10, 12);
    for (let i = 0; i < 1100; i++) {
      now = month(i);
      const r = await admit(one, key);
      assert.deepEqual([r.status, r.asked], [200, true]);
      one.gate.settle(r.ticket, 200);
    }
    now = month(1100);
    await gate.usage.set('m@example.com', 99);
    const last = await admit(two, key);
    assert.deepEqual([last.status, last.asked], [200, true], 'the 100th unit, on the other worker');
    const refused = await admit(one, key);
    assert.deepEqual([refused.status, refused.asked], [429, true], 'the month taken, seen by the first worker too');
    two.gate.settle(last.ticket, 200);
    assert.equal((await gate.usage.get('m@example.com')).used, 100);
  });

  it('a worker that dies -> units it held unsettled go back; what it settled before is counted', async () => {
    const { key } = await gate.accounts.create({ email: 'h@example.com', plan: 'free', password: 'correct horse battery' });
    await gate.usage.set('h@example.com', 97);
    const dying = worker();
    const sent = await admit(dying, key);
    await admit(dying, key);
    await admit(dying, key); // 97 + 3 held: the month is taken
    dying.gate.settle(sent.ticket, 200); // reported in shared memory, its message never posted
    dying.release(); // as the pool does when the thread has exited
    const other = worker();
    const r = [await admit(other, key), await admit(other, key), await admit(other, key)];
    assert.deepEqual(r.map((x) => x.status), [200, 200, 429], 'the 2 never answered went back');
    assert.equal((await gate.usage.get('h@example.com')).used, 98);
  });

  it("strict: a worker that dies with 200s on disk it was told of and never sent (past many it sent, some read late, across midnight) -> each withdrawn on its own record's day; the days and the month count the 200s sent", async () => {
    const state = await tempState(after);
    const store = await openStore({ state, role: 'server', clock, durability: 'strict', scrypt: FAST_SCRYPT });
    const strictGate = openGate({ store, clock });
    try {
      const strictTable = QuotaTable.for(strictGate, clock)!;
      const channel = new MessageChannel();
      channels.push(channel);
      const link = strictTable.link(channel.port1, new Bell());
      // The worker's end of the channel, whose messages wait in `unread` once `reading` is false: a
      // thread that stands still and reads the word that its 200s may leave late, or never.
      let reading = true;
      const unread: unknown[] = [];
      let handle: (m: unknown) => void = () => {};
      const port = {
        on(_: 'message', h: (m: unknown) => void) {
          handle = h;
          channel.port2.on('message', (m) => (reading ? handle(m) : unread.push(m)));
          return port;
        },
        postMessage: (m: unknown) => channel.port2.postMessage(m),
      };
      const w: Side = { gate: new SharedGate({ ...link.setup, port: port as unknown as MessagePort }, clock), release: link.release };
      const { key } = await strictGate.accounts.create({ email: 's@example.com', plan: 'enterprise', password: 'correct horse battery' });
      const D0 = '2026-11-14';
      const D1 = '2026-11-15';
      let sent = 0; // the 200s whose word the worker read: sent
      const strict200s = async (n: number) => {
        const waits: Promise<void>[] = [];
        for (let i = 0; i < n; i++) {
          const wait = w.gate.settle((await admit(w, key)).ticket, 200);
          assert.ok(wait instanceof Promise, 'a strict 200 waits for its record on disk');
          waits.push(wait.then(() => void sent++));
        }
        return waits;
      };
      const committed = (n: number) => eventually(() => (storeMetric(strictGate, 'committed_requests_total') ?? 0) >= n, undefined, `${n} records on disk`);
      now = Date.parse(`${D0}T23:00:00Z`);
      // Sent, in rounds: the main thread drops from what it keeps those the worker has sent.
      for (let round = 0; round < 5; round++) await Promise.all(await strict200s(30));
      reading = false;
      // X: on disk, its word read only after Y's is posted (then sent); Y: never read. Then Z, on the
      // next day, told while X is sent and Y is not: the main thread drops X only.
      now = Date.parse(`${D0}T23:59:58Z`);
      void strict200s(30);
      await committed(180);
      await eventually(() => unread.length > 0, undefined, "X's word posted");
      await turn();
      const xWords = unread.length;
      now = Date.parse(`${D0}T23:59:59Z`);
      void strict200s(30);
      await committed(210);
      await eventually(() => unread.length > xWords, undefined, "Y's word posted");
      for (const m of unread.splice(0, xWords)) handle(m);
      await turn();
      assert.equal(sent, 180, 'X sent');
      now = Date.parse(`${D1}T00:00:01Z`);
      void strict200s(30);
      await committed(240);
      await turn(); // Z's word posted
      w.release(); // the thread has died
      const days = (report: { daily: readonly { date: string; success: number }[] }) => Object.fromEntries([D0, D1].map((d) => [d, report.daily.find((x) => x.date === d)?.success ?? 0]));
      const live = await strictGate.usage.get('s@example.com');
      assert.deepEqual(days(live), { [D0]: 180, [D1]: 0 }, 'live');
      assert.equal(live.used, 180);
      await strictGate.close();
      const disk = await (await readUsageFiles(state, { clock })).get('s@example.com');
      assert.deepEqual([days(disk), disk.used], [{ [D0]: 180, [D1]: 0 }, 180], 'on disk');
    } finally {
      await strictGate.close();
    }
  });
});
