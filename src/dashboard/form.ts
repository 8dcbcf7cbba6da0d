// Reads a submitted form (application/x-www-form-urlencoded), bounded in size: the dashboard's only
// request bodies.
import type { IncomingMessage } from 'node:http';

/** Far above any form here (a 128-character password, an email, two tokens), far below harm. */
export const FORM_LIMIT_BYTES = 8 * 1024;

export type FormResult = { readonly ok: true; readonly fields: URLSearchParams } | { readonly ok: false; readonly status: 400 | 413 | 415 };

export function readForm(req: IncomingMessage): Promise<FormResult> {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    req.resume(); // drain what was sent, so the connection can serve the answer
    return Promise.resolve({ ok: false, status: 415 });
  }
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > FORM_LIMIT_BYTES) {
    req.resume();
    return Promise.resolve({ ok: false, status: 413 });
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: FormResult) => {
      if (done) return;
      done = true;
      resolve(result);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > FORM_LIMIT_BYTES) {
        chunks.length = 0;
        req.resume();
        finish({ ok: false, status: 413 });
      } else if (!done) chunks.push(chunk);
    });
    req.on('end', () => finish({ ok: true, fields: new URLSearchParams(Buffer.concat(chunks).toString('utf8')) }));
    req.on('error', () => finish({ ok: false, status: 400 }));
    req.on('close', () => finish({ ok: false, status: 400 })); // aborted before its end
  });
}

/** A field's value, or '' when it is missing (every form field here is text). */
export function field(fields: URLSearchParams, name: string): string {
  return fields.get(name) ?? '';
}
