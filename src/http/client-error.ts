// What the HTTP/1.1 parser refuses (400, 408, 414, 431) and CONNECT, answered in JSON with a request id
// only after every response already owed on the connection is written, then the close (issue 15 item 2).
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody, ERRORS, type ErrorCode } from '../errors.ts';

/** Builds the bytes of a JSON error that ends its connection; the listener adds its headers and a request id. */
export type RawAnswer = (code: ErrorCode, extra?: readonly string[], message?: string) => string;

/** A whole HTTP/1.1 response as text: status line, the flat [name, value, ...] headers, the JSON body. */
export function rawResponse(code: ErrorCode, headers: readonly string[], message?: string): string {
  const { status } = ERRORS[code];
  const body = errorBody(code, message);
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n`;
  for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
  return `${head}Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** Parser errors by Node's code; anything else the parser refuses is a 400. */
const PARSER_ERRORS: Readonly<Record<string, ErrorCode>> = {
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
};

/** Longest request target served (RFC 9112 3: at least 8000 octets should be supported); longer is a 414. */
export const MAX_TARGET_LENGTH = 8192;

/**
 * Header overflow: a 414 when it is the request line that overflowed. Node hands over the chunk it was
 * parsing and where it stopped (at the end of the span that crossed the limit: the target, or a header
 * line). When the failing request starts in that chunk (the usual case: one write) and its first line
 * had not ended there, or is itself too long, the target was too long. A request line that began in an
 * earlier chunk is not visible here, and gets the 431.
 */
function overflowCode(err: { rawPacket?: unknown; bytesParsed?: unknown }): ErrorCode {
  const raw = err.rawPacket;
  if (!Buffer.isBuffer(raw)) return 'HEADERS_TOO_LARGE';
  const upTo = typeof err.bytesParsed === 'number' ? Math.min(err.bytesParsed, raw.length) : raw.length;
  // The end of the previous (pipelined) request, not the failing one's own blank line, which may straddle upTo.
  const previous = upTo > 4 ? raw.lastIndexOf('\r\n\r\n', upTo - 4) : -1;
  const begin = previous === -1 ? 0 : previous + 4;
  if (!/^[A-Za-z]+ /.test(raw.toString('latin1', begin, begin + 16))) return 'HEADERS_TOO_LARGE';
  const lineEnd = raw.indexOf('\r\n', begin);
  return lineEnd === -1 || lineEnd >= upTo || lineEnd - begin > MAX_TARGET_LENGTH ? 'URI_TOO_LONG' : 'HEADERS_TOO_LARGE';
}

type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

/** Set on a socket once its refusal is on the way: later parser errors on it are the same request's. */
const REFUSED = Symbol('refused');

/**
 * Calls `then` once no response is owed on `socket`. Node keeps the response being written in
 * `socket._httpMessage` and queues pipelined ones behind it, moving the next in on each 'finish'
 * (its own listener runs first); so wait on the current one until there is none. However late the
 * app answers, the refusal goes out after it, in order. A socket that closes first gets nothing more.
 */
function afterOwedResponses(socket: Socket, then: (socket: Socket) => void): void {
  const current = (socket as HttpSocket)._httpMessage;
  if (current == null) then(socket);
  else current.once('finish', () => afterOwedResponses(socket, then));
}

/** After the refusal the client may still be sending; read and drop that for this long, so it never meets a reset. */
const LINGER_MS = 2000;

/** Writes `answer`, half-closes, and destroys the socket once the client has been quiet for LINGER_MS. */
function refuse(socket: Socket, answer: string): void {
  if (!socket.writable) return void socket.destroy();
  // Closing with unread input would send a TCP reset that can overtake the answer (RFC 9112 9.6):
  // end our side, keep reading (the parser drops it), and destroy the socket once the client is quiet.
  socket.end(answer);
  socket.setTimeout(LINGER_MS);
  socket.once('timeout', destroySocket);
}

function destroySocket(this: Socket): void {
  this.destroy();
}

/** The 'clientError' listener of one listener: JSON 400/408/414/431 after the owed responses. */
export function onClientError(answer: RawAnswer): (err: NodeJS.ErrnoException, socket: Socket) => void {
  return (err, socket) => {
    const parser = err.code?.startsWith('HPE_') || err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    if (!parser) {
      // node:http2 passes on TLS failures too; tls.Server closes those sockets itself, after
      // onTlsClientError had its say. Anything else (a reset mid-request) ends the socket, as Node would.
      if (!err.code?.startsWith('ERR_SSL_') && !err.code?.startsWith('ERR_TLS_')) socket.destroy();
      return;
    }
    const s = socket as Socket & { [REFUSED]?: true };
    if (s[REFUSED]) return; // the parser repeats its error for every later chunk; the answer is on its way
    s[REFUSED] = true;
    const mapped = PARSER_ERRORS[err.code ?? ''] ?? 'BAD_REQUEST';
    const code = mapped === 'HEADERS_TOO_LARGE' ? overflowCode(err as { rawPacket?: unknown }) : mapped;
    afterOwedResponses(socket, (ready) => refuse(ready, answer(code)));
  };
}

/**
 * CONNECT (RFC 9110 9.3.6) asks for a tunnel; this server is no proxy: a 405. Over HTTP/1.1 Node hands
 * over the bare socket: the answer goes out after the owed responses, then the close. Over HTTP/2 it
 * is a stream like any other, answered by the app.
 */
export function onConnect(
  answer: RawAnswer,
  allow: readonly string[],
  handler: (req: IncomingMessage, res: ServerResponse, refusal: 'METHOD_NOT_ALLOWED') => void,
): (req: IncomingMessage, socketOrResponse: Socket | ServerResponse) => void {
  return (req, second) => {
    if (req.httpVersionMajor === 2) return handler(req, second as ServerResponse, 'METHOD_NOT_ALLOWED');
    const socket = second as Socket & { [REFUSED]?: true };
    socket[REFUSED] = true;
    socket.resume(); // Node paused it for a tunnel: read on, so closing never resets
    afterOwedResponses(socket, (ready) => refuse(ready, answer('METHOD_NOT_ALLOWED', allow)));
  };
}

/** What OpenSSL reports when the first bytes on the TLS port are an HTTP request line (GET, HEAD, POST, PUT; CONNECT). */
const PLAIN_HTTP = new Set(['ERR_SSL_HTTP_REQUEST', 'ERR_SSL_HTTPS_PROXY_REQUEST']);

const PLAIN_HTTP_MESSAGE =
  'This port speaks HTTPS: send the request to https:// instead of http://. An API key sent here went over the network in clear: revoke it and create a new one';

/**
 * Plain HTTP sent to the TLS port: rather than an empty reply, a plain-HTTP JSON 400 that says to use
 * https://, written on the TCP socket under the failed TLS one. Node keeps that socket open until this
 * listener returns (`_closeAfterHandlingError`), then closes it.
 */
export function onTlsClientError(answer: RawAnswer): (err: NodeJS.ErrnoException, tlsSocket: Socket) => void {
  return (err, tlsSocket) => {
    const raw = (tlsSocket as Socket & { _parent?: Socket | null })._parent;
    if (PLAIN_HTTP.has(err.code ?? '') && raw?.writable) raw.end(answer('BAD_REQUEST', [], PLAIN_HTTP_MESSAGE));
  };
}
