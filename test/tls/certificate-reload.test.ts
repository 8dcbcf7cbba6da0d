// SIGHUP re-reads --tls-cert and --tls-key (issue 23): a renewed certificate serves new handshakes
// without a restart, and a pair that would not work is logged and leaves the old one serving.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { createSelfSignedCertificate } from '../../src/tls/self-signed.ts';
import { spawnServe } from '../helpers/serve-process.ts';

/** The SHA-256 fingerprint of the certificate a new handshake is given. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerX509Certificate()!.fingerprint256);
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

test('SIGHUP with a renewed pair -> served from then on; with a mismatched pair -> logged, the renewed one stays', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'tls-reload-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const cert = join(dir, 'fullchain.pem');
  const key = join(dir, 'privkey.pem');
  const first = createSelfSignedCertificate();
  const renewed = createSelfSignedCertificate();
  await writeFile(cert, first.cert);
  await writeFile(key, first.key);
  const serve = await spawnServe(['--port', '0', '--state', join(dir, 'state'), '--tls-cert', cert, '--tls-key', key]);
  t.after(() => serve.stop());
  const port = Number(new URL(serve.url).port);
  assert.equal(await servedFingerprint(port), first.fingerprint);

  await writeFile(cert, renewed.cert);
  await writeFile(key, renewed.key);
  serve.child.kill('SIGHUP');
  await serve.waitForLog('certificate reloaded');
  assert.equal(await servedFingerprint(port), renewed.fingerprint);

  await writeFile(key, first.key); // half a renewal: the new key of another certificate
  serve.child.kill('SIGHUP');
  await serve.waitForLog('the key does not belong to the certificate');
  assert.match(serve.stderr(), /certificate not reloaded: the old one keeps serving/);
  assert.equal(await servedFingerprint(port), renewed.fingerprint);
  assert.equal(await serve.stop(), 0);
});
