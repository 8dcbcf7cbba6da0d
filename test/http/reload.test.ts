// Hot reload (CONTRACT 7): valid data swaps in, invalid data is rejected with the loader's messages
// while the old keeps serving; SIGHUP and --watch (files renamed over, directory swapped) both reload.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { renameSync, watch } from 'node:fs';
import { pbkdf2 } from 'node:crypto';
import { promisify } from 'node:util';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createReloader, watchData } from '../../src/data/watch.ts';
import { createLogger, silentLogger } from '../../src/log.ts';
import { startService, type Service } from '../../src/service.ts';
import { fixture } from '../helpers/fixture.ts';
import { createKey, eventually, request, tempDir, writeData } from '../helpers/serve-harness.ts';
import { EVENTUALLY_MS } from '../helpers/deadlines.ts';
import { spawnServe } from '../helpers/serve-process.ts';

const pbkdf2Async = promisify(pbkdf2);

const renamed = () => {
  const data = fixture();
  data.celebrities[0]!.name = 'Zoë Renamed';
  return data;
};
const duplicateSlug = () => {
  const data = fixture();
  data.celebrities[1]!.slug = 'zoe-martin';
  return data;
};

/** Writes beside the target and renames over it, as deploy tools and editors do. */
async function atomicWrite(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text);
  await rename(`${path}.tmp`, path);
}

describe('createReloader on a running service', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  let service: Service;
  let key: string;
  const lines: string[] = [];
  const log = createLogger({ write: (l) => lines.push(l) });
  const nameOf = async () => JSON.parse((await request(service.listeners[0]!.url, '/api/v1/celebrities/zoe-martin', { headers: { 'x-api-key': key } })).body).data.name;

  before(async () => {
    tmp = await tempDir('reload');
    await writeData(join(tmp.dir, 'data'));
    key = await createKey(join(tmp.dir, 'state'), 'reload@example.com');
    service = await startService({ data: join(tmp.dir, 'data'), state: join(tmp.dir, 'state'), tls: false });
  });
  after(async () => {
    await service.close(0);
    await tmp.remove();
  });

  it('valid data -> swapped in, new version live and logged', async () => {
    const before = service.snapshot().version;
    await writeData(join(tmp.dir, 'data'), renamed());
    assert.equal(await createReloader(service, log)('test'), true);
    assert.notEqual(service.snapshot().version, before);
    assert.equal(await nameOf(), 'Zoë Renamed');
    assert.ok(lines.some((l) => l.includes('"data reloaded"') && l.includes(service.snapshot().version)));
  });

  it("invalid data -> rejected with the loader's messages, the old data keeps serving", async () => {
    const live = service.snapshot().version;
    await writeFile(join(tmp.dir, 'data', 'celebrities.json'), JSON.stringify(duplicateSlug().celebrities));
    await writeFile(join(tmp.dir, 'data', 'movies.json'), '[{"_id": "m1",');
    try {
      assert.equal(await createReloader(service, log)('test'), false);
      assert.equal(service.snapshot().version, live);
      assert.equal(await nameOf(), 'Zoë Renamed', 'the data of the previous reload is still served');
      const rejected = JSON.parse(lines.findLast((l) => l.includes('reload rejected'))!);
      assert.equal(rejected.version, live);
      assert.ok(rejected.problems.some((p: string) => p.startsWith('movies.json') && p.includes('invalid JSON')), rejected.problems.join('\n'));
      assert.ok(rejected.problems.some((p: string) => p.startsWith('celebrities.json') && p.includes('slug')), rejected.problems.join('\n'));
    } finally {
      await writeData(join(tmp.dir, 'data'));
    }
  });

  it('reloads never overlap; a burst of requests runs at most one more', async () => {
    let calls = 0;
    let active = 0;
    const counting = {
      snapshot: () => service.snapshot(),
      reload: async () => {
        calls++;
        assert.equal(++active, 1, 'two reloads at once');
        try {
          return await service.reload();
        } finally {
          active--;
        }
      },
    };
    const reload = createReloader(counting, silentLogger);
    assert.deepEqual(await Promise.all([reload('a'), reload('b'), reload('c'), reload('d')]), [true, true, true, true]);
    assert.equal(calls, 2);
  });

  it('requests during reloads all succeed, each on one whole snapshot', async () => {
    const reload = createReloader(service, silentLogger);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    const names = new Set<string>();
    const traffic = Array.from({ length: 200 }, async () => {
      const r = await request(service.listeners[0]!.url, '/api/v1/celebrities/zoe-martin', { headers: { 'x-api-key': key }, agent });
      assert.equal(r.status, 200);
      names.add(JSON.parse(r.body).data.name);
    });
    for (const data of [renamed(), fixture(), renamed()]) {
      await writeData(join(tmp.dir, 'data'), data);
      assert.equal(await reload('test'), true);
    }
    await Promise.all(traffic);
    agent.destroy();
    assert.ok([...names].every((n) => n === 'Zoë Martín' || n === 'Zoë Renamed'), [...names].join());
  });
});

describe('watchData', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  before(async () => (tmp = await tempDir('watch')));
  after(async () => tmp.remove());

  /**
   * The test's own watch on the same directory: once it has seen an event, so has watchData's (libuv
   * reads one inotify descriptor per loop and hands each event to every watch of that directory in
   * the same pass; the setImmediate lets that pass finish). Deadlines only fail a hung test. They run
   * on the real clock, set and cleared: a deadline left running (the mock's clearTimeout does not clear
   * a real timer) kept the file's process alive 20 s after its tests were done.
   */
  function observe(dir: string, real: { readonly setTimeout: typeof setTimeout; readonly clearTimeout: typeof clearTimeout }) {
    const counts = new Map<string, number>();
    const waiting = new Set<() => void>();
    const watcher = watch(dir, { persistent: false }, (_event, name) => {
      if (name !== null) counts.set(name, (counts.get(name) ?? 0) + 1);
      for (const check of waiting) check();
    });
    const until = (name: string, n: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = real.setTimeout(() => reject(new Error(`${n} event(s) for ${name} not seen in ${EVENTUALLY_MS} ms`)), EVENTUALLY_MS);
        const check = () => {
          if ((counts.get(name) ?? 0) < n) return;
          waiting.delete(check);
          real.clearTimeout(timer);
          setImmediate(resolve);
        };
        waiting.add(check);
        check();
      });
    return { until, close: () => watcher.close() };
  }

  it('a burst of atomic renames over a file -> one reload after the debounce; the watch survives them', async (t) => {
    const dir = join(tmp.dir, 'files');
    await writeData(dir);
    const real = { setTimeout, clearTimeout };
    // The debounce runs on the mock clock: no time passes inside it unless the test ticks, however slow the machine.
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
    let changes = 0;
    const seen = observe(dir, real);
    const watcher = watchData(dir, () => changes++, { debounceMs: 400, log: silentLogger });
    try {
      for (let i = 0; i < 3; i++) await atomicWrite(join(dir, 'celebrities.json'), JSON.stringify(fixture().celebrities));
      await seen.until('celebrities.json', 3);
      t.mock.timers.tick(399);
      assert.equal(changes, 0, 'still inside the debounce window');
      t.mock.timers.tick(1);
      assert.equal(changes, 1, 'one reload for the burst');
      await atomicWrite(join(dir, 'news.json'), JSON.stringify(fixture().news));
      await seen.until('news.json', 1);
      t.mock.timers.tick(400);
      assert.equal(changes, 2, 'second reload after the renames');
      await writeFile(join(dir, '.celebrities.json.swp'), 'x');
      await writeFile(join(dir, 'notes.txt'), 'x');
      await seen.until('notes.txt', 1);
      t.mock.timers.tick(10 * 400);
      assert.equal(changes, 2, 'files that are not .json are ignored');
    } finally {
      watcher.close();
      seen.close();
    }
  });

  it('a directory swapped in by rename is noticed and watched from then on', async () => {
    const dir = join(tmp.dir, 'live');
    await writeData(dir);
    await writeData(join(tmp.dir, 'next'), renamed());
    let changes = 0;
    const watcher = watchData(dir, () => changes++, { debounceMs: 50, recheckMs: 100, log: silentLogger });
    try {
      await rename(dir, join(tmp.dir, 'previous'));
      await rename(join(tmp.dir, 'next'), dir);
      await eventually(() => changes === 1, EVENTUALLY_MS, 'reload after the swap');
      await atomicWrite(join(dir, 'movies.json'), JSON.stringify(fixture().movies));
      await eventually(() => changes === 2, EVENTUALLY_MS, 'reload from the new directory');
    } finally {
      watcher.close();
    }
  });

  it('a directory swapped in before the first look at it is noticed too (the watch and the identity it compares are of one directory)', async () => {
    // The first identity was an async stat: a swap that ran before it (here: every thread of libuv's
    // pool busy, as on a loaded machine) made the new directory the "first" one while the watch held
    // the old, moved-away one, and no change in the new directory was ever seen.
    const dir = join(tmp.dir, 'early');
    await writeData(dir);
    await writeData(join(tmp.dir, 'early-next'), renamed());
    const busy = Array.from({ length: 16 }, () => pbkdf2Async('x', 'y', 20_000, 32, 'sha256'));
    let changes = 0;
    const watcher = watchData(dir, () => changes++, { debounceMs: 50, recheckMs: 100, log: silentLogger });
    try {
      renameSync(dir, join(tmp.dir, 'early-previous'));
      renameSync(join(tmp.dir, 'early-next'), dir);
      await Promise.all(busy);
      await eventually(() => changes === 1, EVENTUALLY_MS, 'reload after the swap');
      await atomicWrite(join(dir, 'movies.json'), JSON.stringify(fixture().movies));
      await eventually(() => changes === 2, EVENTUALLY_MS, 'reload from the new directory');
    } finally {
      watcher.close();
    }
  });
});

describe('serve: SIGHUP and --watch', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  before(async () => (tmp = await tempDir('serve-reload')));
  after(async () => tmp.remove());

  for (const mode of ['SIGHUP', '--watch'] as const) {
    it(`${mode}: valid data goes live; invalid data is rejected and logged, the previous data keeps serving`, async () => {
      const data = join(tmp.dir, `data-${mode}`);
      await writeData(data);
      const state = join(tmp.dir, `state-${mode}`);
      const key = await createKey(state, 'hup@example.com');
      const serve = await spawnServe(['--insecure-http', '--port', '0', '--state', state, '--data', data, ...(mode === '--watch' ? ['--watch'] : [])]);
      const nameOf = async () => {
        const r = await request(serve.urls[0]!, '/api/v1/celebrities/zoe-martin', { headers: { 'x-api-key': key } });
        return r.status === 200 ? JSON.parse(r.body).data.name : `status ${r.status}`;
      };
      try {
        assert.equal(await nameOf(), 'Zoë Martín');
        await atomicWrite(join(data, 'celebrities.json'), JSON.stringify(renamed().celebrities));
        if (mode === 'SIGHUP') serve.child.kill('SIGHUP');
        await eventually(async () => (await nameOf()) === 'Zoë Renamed', EVENTUALLY_MS, 'the new data served');
        // Info lines are written in batches (src/log.ts): wait for the line rather than expect it at once.
        await serve.waitForLog(`"msg":"data reloaded","reason":"${mode === 'SIGHUP' ? 'SIGHUP' : 'watch'}"`, EVENTUALLY_MS);

        await atomicWrite(join(data, 'celebrities.json'), JSON.stringify(duplicateSlug().celebrities));
        if (mode === 'SIGHUP') serve.child.kill('SIGHUP');
        await serve.waitForLog('reload rejected', EVENTUALLY_MS);
        assert.match(serve.stderr(), /"problems":\["celebrities\.json[^"]*slug/);
        assert.equal(await nameOf(), 'Zoë Renamed');
      } finally {
        serve.child.kill('SIGTERM');
        assert.equal((await serve.exited).code, 0);
      }
    });
  }
});
