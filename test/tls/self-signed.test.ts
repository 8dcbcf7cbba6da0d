// Tests for the DER writer and the self-signed certificate: openssl, X509Certificate and real TLS agree.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, get } from 'node:https';
import type { RequestOptions, Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as der from '../../src/tls/der.ts';
import { createSelfSignedCertificate, ensureCertificate, ipv6Bytes } from '../../src/tls/self-signed.ts';

const DAY = 24 * 3600 * 1000;
const hex = (buf: Buffer) => buf.toString('hex');
const ascii = (text: string) => hex(Buffer.from(text));

function openssl(args: string[], input: string): string {
  return execFileSync('/usr/bin/openssl', args, { input, encoding: 'utf8' });
}

describe('der writer', () => {
  const cases: [string, Buffer, string][] = [
    ['integer 0 -> 020100', der.integer(0), '020100'],
    ['integer 127 -> 02017f', der.integer(127), '02017f'],
    ['integer 128 -> 02020080 (sign octet)', der.integer(128), '02020080'],
    ['integer -129 -> 0202ff7f', der.integer(-129n), '0202ff7f'],
    ['integer bytes 00 00 ff -> 020200ff', der.integer(Buffer.from([0, 0, 0xff])), '020200ff'],
    ['oid rsaEncryption -> 06092a864886f70d010101', der.oid('1.2.840.113549.1.1.1'), '06092a864886f70d010101'],
    ['oid 2.999.3 -> 0603883703', der.oid('2.999.3'), '0603883703'],
    ['boolean true -> 0101ff', der.boolean(true), '0101ff'],
    ['null -> 0500', der.nullValue(), '0500'],
    ['utf8 "é" -> 0c02c3a9', der.utf8String('é'), '0c02c3a9'],
    ['printable "A b" -> 130341 2062', der.printableString('A b'), '1303412062'],
    ['bit string 0x80 with 7 unused -> 03020780', der.bitString(Buffer.from([0x80]), 7), '03020780'],
    ['octet string 200 bytes -> long-form length 81c8', der.octetString(Buffer.alloc(200)).subarray(0, 3), '0481c8'],
    ['octet string 300 bytes -> long-form length 82012c', der.octetString(Buffer.alloc(300)).subarray(0, 4), '0482012c'],
    ['sequence () -> 3000', der.sequence(), '3000'],
    ['set sorts members -> 3106 020102 020105', der.set(der.integer(5), der.integer(2)), '3106020102020105'],
    ['explicit [0] integer 2 -> a003020102', der.explicit(0, der.integer(2)), 'a003020102'],
    ['implicit [2] IA5String "a" -> 820161', der.implicit(2, der.ia5String('a')), '820161'],
    ['implicit [1] SEQUENCE keeps constructed -> a100', der.implicit(1, der.sequence()), 'a100'],
    ['time 2049 -> UTCTime', der.time(new Date('2049-12-31T23:59:59.999Z')), '170d' + ascii('491231235959Z')],
    ['time 2050 -> GeneralizedTime', der.time(new Date('2050-01-01T00:00:00Z')), '180f' + ascii('20500101000000Z')],
    ['time 1949 -> GeneralizedTime', der.time(new Date('1949-06-01T12:00:00Z')), '180f' + ascii('19490601120000Z')],
  ];
  for (const [name, actual, expected] of cases) {
    it(name, () => assert.equal(hex(actual), expected));
  }

  it('rejects what it cannot encode', () => {
    assert.throws(() => der.oid('3.1'), TypeError);
    assert.throws(() => der.oid('1.40'), TypeError);
    assert.throws(() => der.printableString('a@b'), TypeError);
    assert.throws(() => der.ia5String('ü'), TypeError);
    assert.throws(() => der.bitString(Buffer.from([1]), 8), RangeError);
    assert.throws(() => der.explicit(31, der.nullValue()), RangeError);
    assert.throws(() => der.time(new Date('nope')), RangeError);
  });
});

describe('ipv6Bytes', () => {
  const cases: [string, string][] = [
    ['::1', '00000000000000000000000000000001'],
    ['::', '00000000000000000000000000000000'],
    ['fe80::', 'fe800000000000000000000000000000'],
    ['2001:db8::8a2e:370:7334', '20010db80000000000008a2e03707334'],
    ['::ffff:192.0.2.1', '00000000000000000000ffffc0000201'],
    ['1:2:3:4:5:6:7:8', '00010002000300040005000600070008'],
  ];
  for (const [input, expected] of cases) {
    it(`${input} -> ${expected}`, () => assert.equal(hex(ipv6Bytes(input)), expected));
  }
});

describe('createSelfSignedCertificate', () => {
  const made = createSelfSignedCertificate();

  it('openssl parses it: v3, ecdsa-with-SHA256, SAN, CA:FALSE, serverAuth', () => {
    const text = openssl(['x509', '-noout', '-text'], made.cert);
    assert.match(text, /Version: 3 \(0x2\)/);
    assert.match(text, /Signature Algorithm: ecdsa-with-SHA256/);
    assert.match(text, /Subject: O = celebrity-api self-signed, CN = localhost/);
    assert.match(text, /Issuer: O = celebrity-api self-signed, CN = localhost/);
    assert.match(text, /NIST CURVE: P-256/);
    assert.match(text, /Basic Constraints: critical\s+CA:FALSE/);
    assert.match(text, /Key Usage: critical\s+Digital Signature\n/);
    assert.match(text, /Extended Key Usage: *\n\s+TLS Web Server Authentication\n/);
    assert.match(text, /DNS:localhost, IP Address:127\.0\.0\.1, IP Address:0:0:0:0:0:0:0:1\n/);
    // strict DER re-parse and a self-verification by openssl itself
    openssl(['asn1parse', '-strictpem'], made.cert);
    openssl(['x509', '-noout', '-checkend', String(800 * 86400)], made.cert);
  });

  it('X509Certificate agrees: hosts, signature, fingerprint, key', () => {
    const x509 = new X509Certificate(made.cert);
    assert.equal(x509.checkHost('localhost'), 'localhost');
    assert.equal(x509.checkHost('example.com'), undefined);
    assert.equal(x509.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(x509.checkIP('::1'), '::1');
    assert.equal(x509.checkIP('10.0.0.1'), undefined);
    assert.equal(x509.verify(x509.publicKey), true);
    assert.equal(x509.fingerprint256, made.fingerprint);
    assert.match(made.fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    assert.equal(x509.ca, false);
    assert.deepEqual(x509.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.match(made.key, /^-----BEGIN PRIVATE KEY-----\n/);
    assert.equal(x509.checkPrivateKey(createPrivateKey(made.key)), true);
  });

  it('serial is 16 bytes and positive; validity is now-1h .. now+days', () => {
    const now = new Date('2030-03-04T05:06:07.890Z');
    const x509 = new X509Certificate(createSelfSignedCertificate({ now, days: 10 }).cert);
    assert.match(x509.serialNumber, /^[4-7][0-9A-F]{31}$/);
    assert.equal(new Date(x509.validFrom).toISOString(), '2030-03-04T04:06:07.000Z');
    assert.equal(new Date(x509.validTo).toISOString(), '2030-03-14T05:06:07.000Z');
    assert.notEqual(createSelfSignedCertificate().fingerprint, made.fingerprint);
  });

  it('subjectKeyIdentifier is SHA-1 of the public key point (RFC 5280 4.2.1.2)', () => {
    const jwk = new X509Certificate(made.cert).publicKey.export({ format: 'jwk' });
    const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
    const expected = createHash('sha1').update(point).digest('hex').toUpperCase().match(/../g)!.join(':');
    assert.match(openssl(['x509', '-noout', '-ext', 'subjectKeyIdentifier'], made.cert), new RegExp(expected));
  });

  it('custom hosts, and a notAfter past 2049 as GeneralizedTime', () => {
    const { cert } = createSelfSignedCertificate({
      hosts: ['api.example.test', '*.dev.test', '192.0.2.7', '2001:db8::1'],
      now: new Date('2049-06-01T00:00:00Z'),
      days: 400,
    });
    const x509 = new X509Certificate(cert);
    assert.equal(
      x509.subjectAltName,
      'DNS:api.example.test, DNS:*.dev.test, IP Address:192.0.2.7, IP Address:2001:DB8:0:0:0:0:0:1',
    );
    assert.equal(x509.checkHost('a.dev.test'), '*.dev.test'); // returns the SAN entry that matched
    assert.equal(x509.checkIP('2001:db8::1'), '2001:db8::1');
    assert.equal(x509.checkHost('localhost'), undefined);
    assert.equal(new Date(x509.validTo).toISOString(), '2050-07-06T00:00:00.000Z');
    const asn1 = openssl(['asn1parse'], cert);
    assert.match(asn1, /UTCTIME +:490531230000Z/);
    assert.match(asn1, /GENERALIZEDTIME +:20500706000000Z/);
  });

  it('rejects bad options', () => {
    assert.throws(() => createSelfSignedCertificate({ hosts: [] }), RangeError);
    assert.throws(() => createSelfSignedCertificate({ hosts: ['bad host'] }), TypeError);
    assert.throws(() => createSelfSignedCertificate({ hosts: ['fe80::1%eth0'] }), TypeError);
    assert.throws(() => createSelfSignedCertificate({ days: 0 }), RangeError);
  });
});

/** One GET without connection reuse; resolves with status and body, rejects with the TLS error. */
function fetchOnce(options: RequestOptions): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get({ path: '/', agent: false, ...options }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error('timeout')));
  });
}

describe('TLS with the generated certificate', () => {
  const { cert, key } = createSelfSignedCertificate();
  let server: Server;
  let port = 0;

  before(async () => {
    server = createServer({ cert, key, minVersion: 'TLSv1.2' }, (req, res) => {
      res.end(`hello over ${(req.socket as import('node:tls').TLSSocket).getProtocol()}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('pinned ca, servername localhost -> 200', async () => {
    const res = await fetchOnce({ host: '127.0.0.1', port, ca: cert, servername: 'localhost', rejectUnauthorized: true });
    assert.equal(res.status, 200);
    assert.match(res.body, /^hello over TLSv1\.[23]$/);
  });

  it('pinned ca, host 127.0.0.1 (IP SAN) -> 200', async () => {
    const res = await fetchOnce({ host: '127.0.0.1', port, ca: cert, rejectUnauthorized: true });
    assert.equal(res.status, 200);
  });

  it('no ca -> self-signed certificate error', async () => {
    await assert.rejects(fetchOnce({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: true }), {
      code: 'DEPTH_ZERO_SELF_SIGNED_CERT',
    });
  });

  it('pinned ca, name not in the SAN -> altname error', async () => {
    await assert.rejects(fetchOnce({ host: '127.0.0.1', port, ca: cert, servername: 'example.com' }), {
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
  });
});

describe('ensureCertificate', () => {
  let stateDir = '';
  before(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'celebrity-tls-'));
  });
  after(() => rm(stateDir, { recursive: true, force: true }));

  const mode = async (path: string) => (await stat(path)).mode & 0o777;

  it('creates tls/ 0700, key 0600, cert 0600 (the state directory is owner-only), then reuses them', async () => {
    const first = await ensureCertificate(stateDir);
    assert.equal(first.created, true);
    assert.equal(first.certFile, join(stateDir, 'tls', 'cert.pem'));
    assert.equal(first.keyFile, join(stateDir, 'tls', 'key.pem'));
    assert.equal(await mode(join(stateDir, 'tls')), 0o700);
    assert.equal(await mode(first.keyFile), 0o600);
    assert.equal(await mode(first.certFile), 0o600);
    assert.equal(await readFile(first.certFile, 'utf8'), first.cert);
    assert.equal(await readFile(first.keyFile, 'utf8'), first.key);
    assert.equal(new X509Certificate(first.cert).fingerprint256, first.fingerprint);

    const second = await ensureCertificate(stateDir);
    assert.equal(second.created, false);
    assert.equal(second.fingerprint, first.fingerprint);
    assert.equal(second.key, first.key);
  });

  const replaced: [string, (dir: string) => Promise<unknown>][] = [
    ['expired -> replaced', (dir) => ensureCertificate(dir, new Date(Date.now() - 900 * DAY))],
    ['expires in 3 days -> replaced', (dir) => ensureCertificate(dir, new Date(Date.now() - 822 * DAY))],
    ['not valid yet -> replaced', (dir) => ensureCertificate(dir, new Date(Date.now() + 2 * DAY))],
    ['key of another certificate -> replaced', async (dir) => {
      await ensureCertificate(dir);
      await writeFile(join(dir, 'tls', 'key.pem'), createSelfSignedCertificate().key);
    }],
    ['damaged cert -> replaced', async (dir) => {
      await ensureCertificate(dir);
      await writeFile(join(dir, 'tls', 'cert.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    }],
    ['key missing -> replaced', async (dir) => {
      await ensureCertificate(dir);
      await rm(join(dir, 'tls', 'key.pem'));
    }],
  ];
  for (const [name, setup] of replaced) {
    it(name, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'celebrity-tls-'));
      try {
        await setup(dir);
        const old = await readFile(join(dir, 'tls', 'cert.pem'), 'utf8').catch(() => '');
        const now = new Date();
        const fresh = await ensureCertificate(dir, now);
        assert.equal(fresh.created, true);
        assert.notEqual(fresh.cert, old);
        const x509 = new X509Certificate(await readFile(fresh.certFile, 'utf8'));
        assert.equal(x509.fingerprint256, fresh.fingerprint);
        assert.ok(Date.parse(x509.validTo) > now.getTime() + 800 * DAY);
        assert.equal(x509.checkPrivateKey(createPrivateKey(await readFile(fresh.keyFile, 'utf8'))), true);
        assert.equal(await mode(fresh.keyFile), 0o600);
        assert.equal((await ensureCertificate(dir, now)).created, false);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});
