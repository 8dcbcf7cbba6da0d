// When the store fails under the dashboard: an unreachable shared store is a 503 page that clears by
// itself, anything else a 500 page with a reference and no detail; both logged with the request id.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startService } from '../../src/service.ts';
import { openFileStore } from '../../src/store/file/file-store.ts';
import { StoreUnavailableError, type SessionStore } from '../../src/store/types.ts';
import { fixture } from '../helpers/fixture.ts';
import { captureLog } from '../helpers/state.ts';

test('store unreachable -> 503 HTML with Retry-After; a bug -> 500 HTML naming only the request id', async (t) => {
  const inner = await openFileStore({ state: 'memory', role: 'server' });
  let failure: Error = new StoreUnavailableError('redis did not answer in 500 ms');
  const sessions: SessionStore = { ...inner.sessions, get: async () => Promise.reject(failure) };
  const log = captureLog();
  const service = await startService({ data: fixture(), state: 'memory', tls: false, store: { ...inner, sessions }, log });
  t.after(() => service.close());
  const get = () => fetch(`${service.listeners[0]!.url}/dashboard`, { headers: { cookie: `__Host-celebrity-session=${'a'.repeat(43)}` }, redirect: 'manual' });

  const unavailable = await get();
  assert.equal(unavailable.status, 503);
  assert.equal(unavailable.headers.get('retry-after'), '1');
  assert.match(unavailable.headers.get('content-type')!, /^text\/html/);
  assert.match(await unavailable.text(), /Nothing was changed/);

  failure = new Error('secret detail of a bug');
  const broken = await get();
  const id = broken.headers.get('x-request-id')!;
  const body = await broken.text();
  assert.equal(broken.status, 500);
  assert.ok(body.includes(id), 'the page gives the request id as a reference');
  assert.ok(!body.includes('secret detail'), 'and nothing of the error');
  assert.ok(log.lines.some((l) => l.includes('"level":"error"') && l.includes(id) && l.includes('secret detail')));
});
