// The newcomer's path through a real `serve --signup open` process over HTTPS: sign up, get a key, call
// the API, see it counted; sessions in the state directory survive a restart; plain HTTP moves to HTTPS.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Visitor } from '../helpers/dashboard-visitor.ts';
import { tempDir, writeData } from '../helpers/serve-harness.ts';
import { runCli, spawnServe } from '../helpers/serve-process.ts';
import { EVENTUALLY_MS, within } from '../helpers/state.ts';

const PW = 'purple elephant tuesday';

test('serve --signup open over HTTPS: sign up, key, API call counted within 2 s; sessions survive a restart', async () => {
  const tmp = await tempDir('dashboard-serve');
  after(() => tmp.remove());
  const data = join(tmp.dir, 'data');
  const state = join(tmp.dir, 'state');
  await writeData(data);
  const args = ['--data', data, '--state', state, '--port', '0', '--http-port', '0', '--signup', 'open', '--operator-email', 'ops@example.com'];
  let server = await spawnServe(args, 2);
  try {
    const ca = await readFile(join(state, 'tls', 'cert.pem'));
    const [httpsUrl, plainUrl] = server.urls as [string, string];
    const v = new Visitor(httpsUrl, { ca });
    const signup = await v.get('/dashboard/signup');
    assert.equal(signup.status, 200);
    assert.equal(signup.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains');
    assert.equal((await v.post('/dashboard/signup', { email: 'newcomer@example.com', password: PW })).headers.location, '/dashboard');
    const key = await v.key('generate', PW);
    assert.ok(key);
    const call = await new Visitor(httpsUrl, { ca }).get('/api/v1/celebrities', { 'x-api-key': key });
    assert.equal(call.status, 200);
    await within(EVENTUALLY_MS, async () => /1 of 100/.test((await v.get('/dashboard')).text));
    await server.waitForLog('"msg":"dashboard key generated"');
    assert.ok(!server.stderr().includes(key) && !server.stderr().includes(PW), 'neither the key nor the password in the log');

    const moved = await new Visitor(plainUrl).get('/dashboard/login');
    assert.equal(moved.status, 308);
    assert.equal(moved.headers.location, `${httpsUrl}/dashboard/login`);

    const token = v.cookie('__Host-celebrity-session')!;
    assert.equal(await server.stop(), 0);
    const file = join(state, 'sessions.json');
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const stored = await readFile(file, 'utf8');
    assert.ok(!stored.includes(token), 'the state holds no session id');
    assert.ok(stored.includes(createHash('sha256').update(token).digest('hex')), 'only its SHA-256');

    server = await spawnServe(args, 2);
    const again = new Visitor(server.urls[0]!, { ca });
    again.jar.set('__Host-celebrity-session', token);
    const home = await again.get('/dashboard');
    assert.equal(home.status, 200, 'still logged in after the restart');
    assert.match(home.text, /1 of 100/);
  } finally {
    await server.stop();
  }
});

test('serve --signup takes open or closed only; --operator-email an address', async () => {
  const bad = await runCli(['serve', '--signup', 'maybe', '--state', '/nonexistent/state']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--signup: must be one of open, closed/);
  const mail = await runCli(['serve', '--operator-email', 'not an address', '--state', '/nonexistent/state']);
  assert.equal(mail.code, 2);
  assert.match(mail.stderr, /--operator-email/);
});
