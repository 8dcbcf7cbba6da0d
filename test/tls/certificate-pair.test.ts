// checkCertificatePair (src/tls/certificate-pair.ts): the pair a SIGHUP would install, refused with a
// reason when it would not serve.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkCertificatePair } from '../../src/tls/certificate-pair.ts';
import { createSelfSignedCertificate } from '../../src/tls/self-signed.ts';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const a = createSelfSignedCertificate({ now: new Date(NOW - 86_400_000) });
const b = createSelfSignedCertificate({ now: new Date(NOW - 86_400_000) });
const expired = createSelfSignedCertificate({ now: new Date(NOW - 10 * 86_400_000), days: 2 });
const future = createSelfSignedCertificate({ now: new Date(NOW + 86_400_000) });

test('a matching pair -> its fingerprint and notAfter', () => {
  const info = checkCertificatePair(a.cert, a.key, NOW);
  assert.equal(info.fingerprint, a.fingerprint);
  assert.ok(Date.parse(info.validTo) > NOW);
});

const REFUSED: [name: string, cert: string, key: string, reason: RegExp][] = [
  ["a's certificate, b's key -> the key does not belong", a.cert, b.key, /the key does not belong to the certificate/],
  ['a truncated certificate -> not a PEM certificate', a.cert.slice(0, 200), a.key, /not a PEM certificate/],
  ['a truncated key -> not a PEM private key', a.cert, a.key.slice(0, 60), /not a PEM private key/],
  ['an expired certificate -> expired on', expired.cert, expired.key, /expired on/],
  ['a certificate not yet valid -> not valid before', future.cert, future.key, /not valid before/],
];
for (const [name, cert, key, reason] of REFUSED) {
  test(name, () => assert.throws(() => checkCertificatePair(cert, key, NOW), reason));
}
