// The access log: one line per response through the structured logger (JSON lines or text),
// with the client address, and never an API key (SPEC 5.5, CONTRACT 4).
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks'; // a binding: the global is a getter per read
import { clientAddress } from '../access/client-address.ts';
import { isKeyBody, KEY_LENGTH, KEY_PREFIX } from '../access/key-format.ts';
import type { Logger } from '../log.ts';

/** Longest request target written out; headers are capped at 16 KiB, a log line need not be. */
const MAX_PATH = 1024;

/** What a key looks like once decoded: `cel_` and a run of base62 (a part of one is still hidden). */
const PREFIXED = /cel_[A-Za-z0-9]{4}/;
const BODY_LENGTH = KEY_LENGTH - KEY_PREFIX.length;
/** The parts of a target: path segments, parameter names and values. */
const PART = /[^/?&=;,]+/g;
const SECRET_NAME = /key|token|secret|password|auth/i;
const REDACTED = 'cel_[redacted]';

/** %XX decoded, however often it was applied: `c%65l_`, `%2563el_` and `cel_` are the same key. */
function decoded(part: string): string {
  let text = part;
  for (let i = 0; i < 3 && text.includes('%'); i++) {
    const next = text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (next === text) break;
    text = next;
  }
  return text;
}

/** A key body (base62 with a valid checksum) anywhere in a run of base62 at least as long. */
function holdsKeyBody(text: string): boolean {
  let run = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0;
    if ((c >= 48 && c <= 57) || ((c | 0x20) >= 97 && (c | 0x20) <= 122)) {
      run++;
      continue;
    }
    for (let end = i; run >= BODY_LENGTH && end - BODY_LENGTH >= i - run; end--) {
      if (isKeyBody(text.slice(end - BODY_LENGTH, end))) return true;
    }
    run = 0;
  }
  return false;
}

function redactPart(part: string, at: number, target: string): string {
  // The value of a parameter whose name suggests a credential: clients do paste keys into URLs.
  if (target.charCodeAt(at - 1) === 61 /* = */) {
    const name = Math.max(target.lastIndexOf('&', at), target.lastIndexOf('?', at));
    if (name !== -1 && SECRET_NAME.test(decoded(target.slice(name + 1, at - 1)))) return '[redacted]';
  }
  const text = decoded(part);
  return PREFIXED.test(text) || (text.length >= BODY_LENGTH && holdsKeyBody(text)) ? REDACTED : part;
}

/**
 * The request target as logged: every path segment, parameter name and value that holds a key once
 * percent-decoded, with or without its `cel_` prefix (checked by its checksum), becomes
 * `cel_[redacted]`, and values of credential-named parameters `[redacted]` (CONTRACT 4).
 */
export function redactTarget(target: string): string {
  const short = target.length > MAX_PATH ? target.slice(0, MAX_PATH) + '...' : target;
  return mayHoldSecret(short) ? short.replace(PART, redactPart) : short;
}

/**
 * False only when no part of `target` can be redacted: nothing percent-encoded (each part is then
 * its own decoding), no `cel_`, no run of base62 as long as a key body, and no credential-like word
 * anywhere (so in no parameter name). Most targets: one scan instead of a regex callback per part
 * (about 1.5 µs a line).
 */
function mayHoldSecret(target: string): boolean {
  if (target.indexOf('%') !== -1 || target.indexOf(KEY_PREFIX) !== -1 || SECRET_NAME.test(target)) return true;
  let run = 0;
  for (let i = 0; i < target.length; i++) {
    const c = target.charCodeAt(i);
    if ((c >= 48 && c <= 57) || ((c | 0x20) >= 97 && (c | 0x20) <= 122)) {
      if (++run >= BODY_LENGTH) return true;
    } else run = 0;
  }
  return false;
}

export type AccessLogEntry = {
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly ms: number;
  readonly client: string;
};

/**
 * Writes one entry; 5xx go out as errors so they pass a `--log-level warn` filter. A line the level
 * drops costs nothing: no redaction, no address, no entry.
 */
export function createAccessLog(log: Logger, trustProxy: boolean): (req: IncomingMessage, status: number, requestId: string, startMs: number) => void {
  const infoOn = log.enabled?.('info') ?? true;
  return (req, status, requestId, startMs) => {
    if (status < 500 && !infoOn) return;
    const entry: AccessLogEntry = {
      requestId,
      method: (req.method ?? '').slice(0, 16),
      path: redactTarget(req.url ?? ''),
      status,
      ms: Math.round((performance.now() - startMs) * 1e3) / 1e3, // to the microsecond
      client: clientAddress(req, trustProxy),
    };
    if (status >= 500) log.error('request', entry);
    else log.info('request', entry);
  };
}
