// The dashboard's Origin check on TLS, over HTTP/2 and HTTP/1.1 alike (issue 24, item 3): a form
// from another origin is refused whether the request names its host in Host or in :authority, and a
// request that names neither cannot show that its Origin is ours.
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import tls from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { startServer, type RunningServer } from '../../src/index.ts';
import { createSelfSignedCertificate } from '../../src/tls/self-signed.ts';
import { Visitor } from '../helpers/dashboard-visitor.ts';
import { fixture } from '../helpers/fixture.ts';

const PW = 'purple elephant tuesday';
const certificate = createSelfSignedCertificate();
const EVIL = 'https://evil.example';

let server: RunningServer;
let v: Visitor;
let own: string;
let h2: http2.ClientHttp2Session;

/** One HTTP/2 exchange on the shared session: the status, the body. */
function h2Send(headers: http2.OutgoingHttpHeaders, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const stream = h2.request(headers, { endStream: body === undefined });
    let status = 0;
    let text = '';
    stream.setEncoding('utf8');
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (d: string) => (text += d));
    stream.on('end', () => resolve({ status, text }));
    stream.on('error', reject);
    if (body !== undefined) stream.end(body);
  });
}

const cookies = () => [...v.jar].map(([k, val]) => `${k}=${val}`).join('; ');

/** The signed-in page's CSRF token, read over HTTP/2. */
async function h2Csrf(): Promise<string> {
  const page = await h2Send({ ':method': 'GET', ':path': '/dashboard', cookie: cookies() });
  assert.equal(page.status, 200);
  return page.text.match(/name="csrf" value="([^"]+)"/)![1]!;
}

/** POST /dashboard/upgrade over HTTP/2 from `origin`. */
async function h2Upgrade(origin: string): Promise<number> {
  const body = new URLSearchParams({ csrf: await h2Csrf(), plan: 'pro' }).toString();
  const headers = { ':method': 'POST', ':path': '/dashboard/upgrade', cookie: cookies(), origin, 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(body.length) };
  return (await h2Send(headers, body)).status;
}

/** POST /dashboard/upgrade over HTTP/1.1 from `origin`. */
async function h1Upgrade(origin: string): Promise<number> {
  await v.get('/dashboard');
  return (await v.post('/dashboard/upgrade', { plan: 'pro' }, { origin })).status;
}

before(async () => {
  server = await startServer({ data: fixture(), tls: { cert: certificate.cert, key: certificate.key }, dashboard: { signup: 'open' } });
  own = server.url; // https://127.0.0.1:<port>: what the browser would send as Origin
  v = new Visitor(server.url, { ca: Buffer.from(certificate.cert) });
  assert.equal((await v.signUp('origin@example.com', PW)).status, 303);
  h2 = http2.connect(server.url, { ca: certificate.cert });
  h2.on('error', () => {});
});
after(async () => {
  h2.close();
  await server.close();
});

describe('Origin against the request host (ASVS 3.5.1)', () => {
  it('HTTP/1.1: a foreign Origin -> 403, our own -> 303', async () => {
    assert.equal(await h1Upgrade(EVIL), 403);
    assert.equal(await h1Upgrade(own), 303);
  });

  it('HTTP/2: a foreign Origin (or our host over http:) against :authority -> 403, our own -> 303', async () => {
    assert.equal(await h2Upgrade(EVIL), 403);
    assert.equal(await h2Upgrade('null'), 403);
    assert.equal(await h2Upgrade(own.replace('https:', 'http:')), 403, 'our host over plain HTTP is another origin');
    assert.equal(await h2Upgrade(own), 303);
  });

  it('HTTP/1.0 without Host, with an Origin: nothing to compare it with -> 403', async () => {
    await v.get('/dashboard');
    const body = new URLSearchParams({ csrf: v.csrf()!, plan: 'pro' }).toString();
    const { port } = new URL(server.url);
    const socket = tls.connect({ host: '127.0.0.1', port: Number(port), ca: certificate.cert, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
    const reply = await new Promise<string>((resolve, reject) => {
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (text += d));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
      socket.write(`POST /dashboard/upgrade HTTP/1.0\r\nCookie: ${cookies()}\r\nOrigin: ${own}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    });
    assert.match(reply, /^HTTP\/1\.1 403 /);
  });
});
