// Starts the service in-process on 127.0.0.1, port 0, with state in memory, for black-box HTTP tests:
// over plain HTTP/1.1 with fetch, or over HTTP/2 on TLS (a self-signed certificate made in memory) with
// node:http2, so the same suites run over both (test/http/over-h2.test.ts).
import http from 'node:http';
import http2 from 'node:http2';
import zlib from 'node:zlib';
import { BUNDLED_DATA } from '../../src/config.ts';
import type { DataInput } from '../../src/data/load.ts';
import { createSelfSignedCertificate } from '../../src/tls/self-signed.ts';
import { assertMatchesDocument } from './openapi-validator.ts';
import { startService, type Service, type ServiceOptions } from '../../src/service.ts';

export type Protocol = 'http1' | 'h2';

export interface TestServer {
  readonly service: Service;
  readonly url: string;
  readonly protocol: Protocol;
  /** GET (or another method) with an optional key; the body decoded and parsed as JSON when there is one. */
  request(path: string, options?: { key?: string; method?: string; headers?: Record<string, string> }): Promise<TestResponse>;
  /** One request as the client received it: the body not decompressed, never checked against the document. */
  raw(path: string, headers?: Record<string, string>, method?: string): Promise<RawReply>;
  /** Creates an account and returns its key. */
  account(plan?: string, email?: string): Promise<string>;
  close(): Promise<void>;
}

export interface TestResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly body: any;
}

export interface RawReply {
  readonly status: number;
  /** Lower-case names, as node:http gives them. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: Buffer;
}

let protocolForSuites: Protocol = 'http1';

/** Makes every later startTestServer() speak `protocol`: over-h2.test.ts runs the suites again this way. */
export function useProtocol(protocol: Protocol): void {
  protocolForSuites = protocol;
}

let certificate: { cert: string; key: string } | null = null;
let accounts = 0;

const decode = (body: Buffer, encoding: string | undefined): Buffer =>
  encoding === 'br' ? zlib.brotliDecompressSync(body) : encoding === 'gzip' ? zlib.gunzipSync(body) : body;

/**
 * One HTTP/2 request as a client that follows RFC 9113 does: a stream the server refused (REFUSED_STREAM,
 * as the streams above a GOAWAY's last stream id are: no work was done for them, 8.7) is sent again, at
 * most three times, on a new session when that one closed. A test server starved of CPU may close an idle
 * session (keepAliveTimeoutMs) while the test's next requests are already on their way.
 */
async function h2Retried(session: () => http2.ClientHttp2Session, path: string, method: string, headers: Record<string, string>): Promise<RawReply> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await h2Request(session(), path, method, headers);
    } catch (e) {
      if (attempt === 3 || !String((e as Error).message).includes('NGHTTP2_REFUSED_STREAM')) throw e;
    }
  }
}

/** One HTTP/2 stream on `session`; the body as it arrived. */
function h2Request(session: http2.ClientHttp2Session, path: string, method: string, headers: Record<string, string>): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, ':method': method, ...headers }, { endStream: true });
    const parts: Buffer[] = [];
    let head: http2.IncomingHttpHeaders = {};
    stream.on('response', (h) => (head = h));
    stream.on('data', (d: Buffer) => parts.push(d));
    stream.on('end', () => {
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(head)) if (!name.startsWith(':') && value !== undefined) out[name] = String(value);
      resolve({ status: Number(head[':status']), headers: out, body: Buffer.concat(parts) });
    });
    stream.on('error', reject);
  });
}

/** One HTTP/1.1 request with node:http, which leaves the body as it came (fetch would decompress it). */
function http1Request(url: string, method: string, headers: Record<string, string>): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    http
      .request(url, { method, headers, agent: false }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers as Record<string, string>, body: Buffer.concat(parts) }));
      })
      .on('error', reject)
      .end();
  });
}

export async function startTestServer(options: Partial<ServiceOptions> & { data?: DataInput; protocol?: Protocol } = {}): Promise<TestServer> {
  const { protocol = protocolForSuites, ...rest } = options;
  if (protocol === 'h2') certificate ??= createSelfSignedCertificate();
  const tls = protocol === 'h2' ? certificate! : false;
  const service = await startService({ data: BUNDLED_DATA, state: 'memory', tls, port: 0, ...rest });
  const url = service.listeners[0]!.url;
  /** The HTTP/2 session, connected again when the server closed an idle one (as a client would). */
  let h2: http2.ClientHttp2Session | null = null;
  const session = (): http2.ClientHttp2Session => {
    if (h2 === null || h2.closed || h2.destroyed) {
      h2 = http2.connect(url, { ca: certificate!.cert });
      h2.on('error', () => {}); // a GOAWAY at close; requests report their own errors
    }
    return h2;
  };
  const raw = (path: string, headers: Record<string, string> = {}, method = 'GET') =>
    protocol !== 'h2' ? http1Request(url + path, method, headers) : h2Retried(session, path, method, headers);
  return {
    service,
    url,
    protocol,
    raw,
    async request(path, { key, method = 'GET', headers = {} } = {}) {
      const sent = { ...(key === undefined ? {} : { 'x-api-key': key }), ...headers };
      let status: number;
      let responseHeaders: Headers;
      let text: string;
      if (protocol !== 'h2') {
        const res = await fetch(url + path, { method, headers: sent });
        [status, responseHeaders, text] = [res.status, res.headers, await res.text()];
      } else {
        // As fetch does: offer the codings it decodes, and decode.
        const reply = await h2Retried(session, path, method, { 'accept-encoding': 'gzip, deflate, br', ...sent });
        [status, responseHeaders] = [reply.status, new Headers(reply.headers as Record<string, string>)];
        text = reply.body.length === 0 ? '' : decode(reply.body, reply.headers['content-encoding']).toString('utf8');
      }
      let body: unknown = undefined;
      if (text.length > 0) {
        body = JSON.parse(text);
        // Every response a black-box test sees must match the published OpenAPI document.
        assertMatchesDocument(path, status, body, method);
      }
      return { status, headers: responseHeaders, text, body };
    },
    async account(plan = 'enterprise', email = `user${++accounts}@example.com`) {
      return (await service.gate.accounts.create({ email, plan, password: 'correct horse battery' })).key;
    },
    async close() {
      h2?.close();
      await service.close();
    },
  };
}
