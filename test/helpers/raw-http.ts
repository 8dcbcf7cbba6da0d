// Raw HTTP/1.1 over a socket, for what fetch cannot send or see: pipelining, missing or doubled Host,
// absurd targets, and the exact order of the responses on one connection.
import net from 'node:net';
import tls from 'node:tls';

export interface RawResponse {
  readonly status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
}

export interface RawExchange {
  /** Everything the server sent, as latin1 text. */
  readonly text: string;
  /** The responses parsed from `text`, in order. */
  readonly responses: RawResponse[];
  /** 'end' when the server closed the connection, 'timeout' when `ms` passed first, or the socket error code. */
  readonly ended: string;
}

/**
 * Writes `chunks` on one connection (TLS when the URL is https, trusting `ca`) and collects what
 * comes back until the server closes, `ms` pass, or `expect` responses are complete.
 */
export function rawExchange(url: string, chunks: readonly (string | Buffer)[], o: { ms?: number; expect?: number; ca?: string | Buffer } = {}): Promise<RawExchange> {
  const { hostname, port, protocol } = new URL(url);
  return new Promise((resolve) => {
    const socket = protocol === 'https:'
      ? tls.connect({ host: hostname, port: Number(port), servername: 'localhost', ALPNProtocols: ['http/1.1'], ...(o.ca ? { ca: o.ca } : { rejectUnauthorized: false }) })
      : net.connect(Number(port), hostname);
    let text = '';
    let settled = false;
    const finish = (ended: string) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve({ text, responses: parseResponses(text), ended });
    };
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      text += d;
      if (o.expect !== undefined && parseResponses(text).length >= o.expect) finish('complete');
    });
    socket.on('end', () => finish('end'));
    socket.on('close', () => finish('end'));
    socket.on('error', (err: NodeJS.ErrnoException) => finish(err.code ?? 'error'));
    socket.setTimeout(o.ms ?? 5000, () => finish('timeout'));
    socket.once(protocol === 'https:' ? 'secureConnect' : 'connect', () => {
      for (const chunk of chunks) socket.write(chunk);
    });
  });
}

/** Splits a stream of HTTP/1.1 responses (bodies framed by Content-Length); an incomplete tail is left out. */
export function parseResponses(text: string): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end === -1) break;
    const lines = text.slice(at, end).split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!)?.[1]);
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
    }
    const length = status === 100 || status === 304 ? 0 : Number(headers.get('content-length') ?? 0);
    if (end + 4 + length > text.length) break;
    out.push({ status, headers, body: text.slice(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return out;
}

/** A GET in origin form with the given extra header lines. */
export const get = (path: string, ...headers: string[]) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${headers.map((h) => h + '\r\n').join('')}\r\n`;
