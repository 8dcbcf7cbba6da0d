// The two generic resource handlers: a list page and a single record, assembled from the
// pre-serialized fragments of the snapshot (no JSON.stringify of records per request).
import type { CollectionIndex } from '../data/indexes.ts';
import { ParameterError } from '../errors.ts';
import { parseListQuery } from '../query/parse.ts';
import { executeQuery } from '../query/execute.ts';

const COMMA = Buffer.from(',');
const TAIL = Buffer.from(']}');

/** A handler's answer: a 200 body, or the error to send. */
export type Outcome = { readonly ok: true; readonly body: Buffer } | { readonly ok: false; readonly code: 'NOT_FOUND' | 'INVALID_PARAMETER'; readonly message?: string };

const NOT_FOUND: Outcome = { ok: false, code: 'NOT_FOUND' };

export function listPage(index: CollectionIndex, query: string): Outcome {
  let plan;
  try {
    plan = parseListQuery(index.def, query);
  } catch (err) {
    if (err instanceof ParameterError) return { ok: false, code: 'INVALID_PARAMETER', message: err.message };
    throw err;
  }
  const { total, ids } = executeQuery(index, plan);
  const pages = Math.ceil(total / plan.limit);
  const head = Buffer.from(
    `{"success":true,"version":"v1","resource":"${index.def.name}","pagination":{"page":${plan.page},"limit":${plan.limit},"total":${total},"pages":${pages}},"data":[`,
  );
  const list = index.list;
  const parts: Buffer[] = [head];
  let length = head.length + TAIL.length + Math.max(ids.length - 1, 0);
  for (let i = 0; i < ids.length; i++) {
    if (i > 0) parts.push(COMMA);
    const item = list[ids[i]!]!;
    parts.push(item);
    length += item.length;
  }
  parts.push(TAIL);
  return { ok: true, body: Buffer.concat(parts, length) };
}

export function detail(index: CollectionIndex, slug: string): Outcome {
  const id = index.slugs.get(slug);
  return id === undefined ? NOT_FOUND : { ok: true, body: index.detail[id]! };
}
