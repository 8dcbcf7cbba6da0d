// Nothing counted is ever lost (CONTRACT 4, issues 13 and 15.1): `serve` under load, SIGKILLed and
// restarted. In strict mode the count after a restart covers every 200 a client received; in
// interval mode it loses at most the last flush interval; a free account never gets more than 100.
import assert from 'node:assert/strict';
import http from 'node:http';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ERRORS } from '../../src/errors.ts';
import { startService } from '../../src/service.ts';
import { openFileStore } from '../../src/store/file/file-store.ts';
import { fixture } from '../helpers/fixture.ts';
import { createKey, tempDir, writeData } from '../helpers/serve-harness.ts';
import { FAST_SCRYPT } from '../helpers/state.ts';
import { runCli, spawnServe, type ListeningProcess } from '../helpers/serve-process.ts';

interface Load {
  /** 200s received, with the time each arrived. */
  readonly ok: number[];
  /** Requests sent and not answered when the kill was sent. */
  inFlightAtKill: number;
}

/**
 * `clients` keep-alive connections each sending requests back to back until `stop()`; `onOk` sees
 * the running count of 200s. Resolves once every connection has ended (answered or cut).
 */
function load(url: string, key: string, clients: number, onOk: (n: number) => void = () => {}): { result: Load; kill: (serve: ListeningProcess) => void; done: Promise<void> } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
  const result: Load = { ok: [], inFlightAtKill: 0 };
  let inFlight = 0;
  let stopped = false;
  const one = () =>
    new Promise<void>((resolve) => {
      inFlight++;
      const req = http.get(`${url}/api/v1/celebrities?limit=1`, { agent, headers: { 'x-api-key': key } }, (res) => {
        res.resume();
        res.on('end', () => {
          inFlight--;
          if (res.statusCode === 200) onOk(result.ok.push(Date.now()));
          resolve();
        });
        res.on('error', () => (inFlight--, resolve()));
      });
      req.on('error', () => {
        inFlight--;
        stopped = true; // the server is gone
        resolve();
      });
    });
  const loop = async () => {
    while (!stopped) await one();
  };
  const done = Promise.all(Array.from({ length: clients }, loop)).then(() => agent.destroy());
  return {
    result,
    done,
    kill(serve) {
      result.inFlightAtKill = inFlight;
      stopped = true;
      serve.child.kill('SIGKILL');
    },
  };
}

/**
 * When the server last wrote its usage log (the newest mtime in the state's usage folder). A flush
 * writes what was reserved before it began (its drain), so the 200s received before its drain are on
 * disk; the write comes after the drain, most often by far less than the 400 ms allowed below, but a
 * slow flush (a first one opens the file and fsyncs the folder) can hold them further apart: then
 * this test can still fail on a starved machine (session 13's note). Read after the kill, before the
 * CLI reads the folder.
 */
async function lastWriteMs(state: string): Promise<number> {
  const dir = join(state, 'usage');
  let newest = 0;
  for (const name of await readdir(dir)) if (name.endsWith('.jsonl')) newest = Math.max(newest, (await stat(join(dir, name))).mtimeMs);
  return newest;
}

/** The month's count as the files say (the CLI replays the log, cutting nothing). */
async function usedOnDisk(state: string, email: string): Promise<number> {
  const r = await runCli(['usage', '--state', state, '--email', email, '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).used;
}

describe('usage durability under SIGKILL', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let data: string;
  before(async () => {
    tmp = await tempDir('durability');
    data = join(tmp.dir, 'data');
    await writeData(data);
  });
  after(() => tmp.remove());

  const serve = (state: string, durability: string) => spawnServe(['--insecure-http', '--port', '0', '--state', state, '--data', data, '--usage-durability', durability, '--log-level', 'warn']);

  /**
   * One round: serve, 20 clients of load, SIGKILL once `killAfter` of 200s arrived or the first 200
   * is `firstOkAgeMs` old, then the count on disk. Returns the load and the count, and when the kill
   * was sent. Both are events of the load, not times from its start: a slow start on a busy machine
   * moves the kill with it.
   */
  async function killRound(state: string, durability: string, key: string, email: string, when: { killAfter?: number; firstOkAgeMs?: number }) {
    const server = await serve(state, durability);
    let killedAt = 0;
    const kill = () => {
      if (killedAt !== 0) return;
      killedAt = Date.now();
      run.kill(server);
    };
    const due = (n: number) => n === when.killAfter || (when.firstOkAgeMs !== undefined && Date.now() - run.result.ok[0]! >= when.firstOkAgeMs);
    const run = load(server.url, key, 20, (n) => due(n) && kill());
    await run.done;
    await server.exited;
    const lastWrite = await lastWriteMs(state);
    return { run: run.result, killedAt, lastWrite, counted: await usedOnDisk(state, email) };
  }

  it('strict, enterprise, 3 kills under load -> recovered count >= every 200 received, <= those + requests in flight', async () => {
    const state = join(tmp.dir, 'strict');
    const key = await createKey(state, 'load@example.com', 'enterprise');
    let received = 0;
    for (let round = 0; round < 3; round++) {
      // Killed mid-load after a count of 200s, not a time: the same on a fast machine and a slow one.
      const { run, counted } = await killRound(state, 'strict', key, 'load@example.com', { killAfter: 300 + 150 * round });
      received += run.ok.length;
      assert.ok(counted >= received, `round ${round}: counted ${counted} < received ${received}`);
      assert.ok(counted <= received + run.inFlightAtKill, `round ${round}: counted ${counted} > received ${received} + in flight ${run.inFlightAtKill}`);
      received = counted; // what was counted but never received stays counted: the next round starts there
    }
  });

  it('interval, enterprise, 2 kills under load -> the loss stays within the last flush interval', async () => {
    const state = join(tmp.dir, 'interval');
    const key = await createKey(state, 'fast@example.com', 'enterprise');
    let counted = 0;
    for (let round = 0; round < 2; round++) {
      // Killed 2.2 s after the first 200: the 200s of the first 0.8 s at least are past a flush, and
      // must be on disk. (From the load's start instead, a slow start left no 200 older than that.)
      const { run, killedAt, lastWrite, counted: now } = await killRound(state, 'interval', key, 'fast@example.com', { firstOkAgeMs: 2200 });
      const lost = counted + run.ok.length - now;
      // The log is flushed once a second: at most the 200s of the last second (and some slack for a
      // busy machine) are lost. A server the machine held past its tick flushes late: the interval is
      // the server's, so the window reaches back to its last write (less 400 ms from its drain to its write).
      // A server that never flushed in the round still fails: its window covers the whole load.
      const windowStart = Math.min(killedAt - 1400, lastWrite - 400);
      const lastInterval = run.ok.filter((t) => t > windowStart).length;
      assert.ok(lastInterval < run.ok.length, `round ${round}: the load ran longer than the window checked`);
      assert.ok(lost <= lastInterval, `round ${round}: lost ${lost}, but only ${lastInterval} were answered in the last interval`);
      assert.ok(now >= counted, 'what was flushed before stays');
      counted = now;
    }
  });

  it('free account: 1,000 concurrent requests, SIGKILL midway, then twice 150 more with a SIGKILL after each -> never more than 100 served this month', async () => {
    const state = join(tmp.dir, 'free');
    const key = await createKey(state, 'free@example.com', 'free');
    // No --usage-durability: the default is strict for a plan with a finite quota.
    const start = () => spawnServe(['--insecure-http', '--port', '0', '--state', state, '--data', data, '--log-level', 'warn']);
    // Round 1: a burst of 1,000 concurrent requests, killed once 30 of them have been answered 200.
    let server = await start();
    let total = 0;
    const burst = load(server.url, key, 1000, (n) => {
      if (n === 30) burst.kill(server);
    });
    await burst.done;
    await server.exited;
    total += burst.result.ok.length;
    assert.ok(total >= 30 && total <= 100, `first burst served ${total}`);
    // Rounds 2 and 3 (issue 15.1): 150 requests, then SIGKILL, then restart.
    for (let round = 0; round < 2; round++) {
      server = await start();
      const statuses = await Promise.all(
        Array.from({ length: 150 }, () => fetch(`${server.url}/api/v1/celebrities?limit=1`, { headers: { 'x-api-key': key } }).then((r) => (r.body?.cancel(), r.status))),
      );
      server.child.kill('SIGKILL');
      await server.exited;
      total += statuses.filter((s) => s === 200).length;
      assert.ok(statuses.every((s) => s === 200 || s === 429), `only 200s and 429s: ${[...new Set(statuses)]}`);
    }
    assert.ok(total <= 100, `served ${total} on a free plan`);
    assert.ok(total >= 100 - burst.result.inFlightAtKill, `served ${total}: only requests in flight at a kill may be counted and not received`);
    assert.equal(await usedOnDisk(state, 'free@example.com'), 100, '`usage` says what was counted: the whole quota');
  });
});

it('strict, the disk refusing: the 200 is never sent; a JSON 503 with a request id, the unit given back', async () => {
  const tmp = await tempDir('refusing');
  after(() => tmp.remove());
  let refuse = false;
  const store = await openFileStore({
    state: tmp.dir, role: 'server', scrypt: FAST_SCRYPT, strictTimeoutMs: 200,
    usageLogWrite: async (fh, data, position) => {
      if (refuse) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      await fh.write(data, 0, data.length, position);
    },
  });
  const service = await startService({ data: fixture(), state: tmp.dir, store, tls: false, port: 0, plans: { free: 5 } });
  try {
    const { key } = await service.gate.accounts.create({ email: 'disk@example.com', plan: 'free', password: 'pw' });
    const get = () => fetch(`${service.listeners[0]!.url}/api/v1/celebrities?limit=1`, { headers: { 'x-api-key': key } });
    const ok = await get();
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('ratelimit'), '"monthly";r=4;t=' + ok.headers.get('ratelimit')!.split('t=')[1]);
    refuse = true;
    const refused = await get();
    assert.equal(refused.status, 503);
    assert.deepEqual(await refused.json(), { success: false, error: 'SERVICE_UNAVAILABLE', message: ERRORS.SERVICE_UNAVAILABLE.message });
    assert.ok(refused.headers.get('x-request-id'));
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.match(refused.headers.get('ratelimit')!, /r=4;/, 'the unit was given back');
    refuse = false;
    assert.equal((await get()).status, 200);
    const usage = await service.gate.usage.get('disk@example.com');
    assert.deepEqual([usage.used, usage.daily[0]!.success, usage.daily[0]!.rejected], [2, 2, 1]);
  } finally {
    await service.close();
  }
});
