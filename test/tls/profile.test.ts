// The TLS listener offers Mozilla's "intermediate" profile (src/tls/profile.ts) with the self-signed
// certificate and an operator's own alike: TLS 1.3, TLS 1.2 with ECDHE and AEAD suites only, no
// renegotiation, HTTP/2 by ALPN. What testssl.sh flagged (issue 23) is each a handshake that fails here.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { startService, type Service } from '../../src/service.ts';
import { createSelfSignedCertificate } from '../../src/tls/self-signed.ts';
import { fixture } from '../helpers/fixture.ts';

interface Handshake {
  readonly protocol: string | null;
  readonly cipher: string;
  readonly alpn: string | false;
}

/** One handshake with these client options: what was agreed, or the error that ended it. */
function handshake(port: number, options: tls.ConnectionOptions): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...options });
    socket.once('secureConnect', () => {
      resolve({ protocol: socket.getProtocol(), cipher: socket.getCipher().standardName, alpn: socket.alpnProtocol ?? false });
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

const TLS12 = { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' } as const;

// What testssl.sh 3.0.8 found offered over TLS 1.2 before: CBC suites (LUCKY13) and CCM8.
const REFUSED = ['ECDHE-ECDSA-AES128-SHA', 'ECDHE-ECDSA-AES128-SHA256', 'ECDHE-ECDSA-AES256-SHA', 'ECDHE-ECDSA-AES256-SHA384', 'ECDHE-ECDSA-AES128-CCM8', 'ECDHE-ECDSA-AES256-CCM8'];

const CERTIFICATES = {
  'the self-signed certificate': 'self-signed',
  "an operator's certificate": createSelfSignedCertificate({ hosts: ['api.example.com', '127.0.0.1'] }),
} as const;

for (const [name, certificate] of Object.entries(CERTIFICATES)) {
  describe(`TLS with ${name}`, () => {
    let service: Service;
    let state: string;
    let port: number;
    before(async () => {
      state = await mkdtemp(join(tmpdir(), 'tls-profile-'));
      service = await startService({ data: fixture(), state, tls: certificate, dashboard: false });
      port = Number(new URL(service.listeners[0]!.url).port);
    });
    after(async () => {
      await service.close(0);
      await rm(state, { recursive: true, force: true });
    });

    it('TLS 1.3 -> agreed, an AEAD suite', async () => {
      const h = await handshake(port, { minVersion: 'TLSv1.3' });
      assert.equal(h.protocol, 'TLSv1.3');
      assert.match(h.cipher, /^TLS_(AES_128_GCM|AES_256_GCM|CHACHA20_POLY1305)_SHA/);
    });

    for (const suite of ['ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-ECDSA-CHACHA20-POLY1305']) {
      it(`TLS 1.2 offering only ${suite} -> agreed`, async () => {
        const h = await handshake(port, { ...TLS12, ciphers: suite });
        assert.equal(h.protocol, 'TLSv1.2');
      });
    }

    for (const suite of REFUSED) {
      it(`TLS 1.2 offering only ${suite} -> handshake refused`, async () => {
        // @SECLEVEL=0: newer OpenSSL clients will not offer CCM8 otherwise, and the server must be the one refusing.
        await assert.rejects(handshake(port, { ...TLS12, ciphers: `${suite}:@SECLEVEL=0` }), /handshake failure|no shared cipher|alert/i);
      });
    }

    it('TLS 1.1 -> refused', async () => {
      await assert.rejects(handshake(port, { minVersion: 'TLSv1.1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' }));
    });

    it('a client-initiated renegotiation over TLS 1.2 -> refused, the connection ends', async () => {
      const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...TLS12 });
      await new Promise<void>((resolve, reject) => socket.once('secureConnect', resolve).once('error', reject));
      const outcome = await new Promise<string>((resolve) => {
        socket.once('error', (err) => resolve(err.message));
        socket.renegotiate({ rejectUnauthorized: false }, (err) => resolve(err ? err.message : 'renegotiated'));
      });
      socket.destroy();
      assert.match(outcome, /no renegotiation/);
    });

    it('ALPN h2, http/1.1 -> h2 (HTTP/2 still negotiates)', async () => {
      const h = await handshake(port, { ALPNProtocols: ['h2', 'http/1.1'] });
      assert.equal(h.alpn, 'h2');
    });
  });
}
