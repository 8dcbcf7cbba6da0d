// The two generic resource handlers: a list page and a single record, assembled from the
// pre-serialized fragments of the snapshot (no JSON.stringify of records per request).
import { detailBody, listBody, slugId, type CollectionIndex } from '../data/indexes.ts';
import { ParameterError } from '../errors.ts';
import { parseListQuery } from '../query/parse.ts';
import { executeQuery } from '../query/execute.ts';

/** A handler's answer: a 200 body, or the error to send. */
export type Outcome = { readonly ok: true; readonly body: Buffer } | { readonly ok: false; readonly code: 'NOT_FOUND' | 'INVALID_PARAMETER' | 'METHOD_NOT_ALLOWED'; readonly message?: string };

export const NOT_FOUND: Outcome = { ok: false, code: 'NOT_FOUND' };

/** `today` is the serving day as yyyymmdd, for the fields that depend on it (celebrity `age`). */
export function listPage(index: CollectionIndex, query: string, today: number): Outcome {
  let plan;
  try {
    plan = parseListQuery(index.def, query);
  } catch (err) {
    if (err instanceof ParameterError) return { ok: false, code: 'INVALID_PARAMETER', message: err.message };
    throw err;
  }
  const { total, ids } = executeQuery(index, plan);
  const pages = Math.ceil(total / plan.limit);
  // One allocation of the exact size: the head, the records and the tail copied into place.
  const head = `{"success":true,"version":"v1","resource":"${index.def.name}","pagination":{"page":${plan.page},"limit":${plan.limit},"total":${total},"pages":${pages}},"data":[`;
  const body = listBody(index, ids, today, head);
  return { ok: true, body };
}

/** `today` is the serving day as yyyymmdd, for the fields that depend on it (celebrity `age`). */
export function detail(index: CollectionIndex, slug: string, today: number): Outcome {
  const id = slugId(index, slug);
  return id === -1 ? NOT_FOUND : { ok: true, body: detailBody(index, id, today) };
}
