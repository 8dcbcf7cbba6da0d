// The two generic resource handlers: a list page and a single record, assembled from the
// pre-serialized fragments of the snapshot (no JSON.stringify of records per request).
import { writeNumber } from '../data/fragments.ts';
import { detailBody, listBody, slugId, type CollectionIndex } from '../data/indexes.ts';
import { releaseSendBuffer } from '../data/send-buffer.ts';
import { ParameterError } from '../errors.ts';
import { parseListQuery } from '../query/parse.ts';
import { executeQuery } from '../query/execute.ts';
import { DEFAULT_LIMIT, type QueryPlan } from '../query/plan.ts';

/** A handler's answer: a 200 body, or the error to send. */
export type Outcome = { readonly ok: true; readonly body: Buffer } | { readonly ok: false; readonly code: 'NOT_FOUND' | 'INVALID_PARAMETER' | 'METHOD_NOT_ALLOWED'; readonly message?: string };

export const NOT_FOUND: Outcome = { ok: false, code: 'NOT_FOUND' };

const LIMIT = Buffer.from(',"limit":');
const TOTAL = Buffer.from(',"total":');
const PAGES = Buffer.from(',"pages":');
const DATA = Buffer.from('},"data":[');

/**
 * A collection's page envelope, written in place for the page being made: its bytes start with
 * `{"success":true,"version":"v1","resource":"<name>","pagination":{"page":` (written once), then the
 * page's numbers (a page number is at most 16 digits). `views[n]` is a Buffer over its first n bytes,
 * made once per length: the join copies the envelope from it whole, with no view made per request.
 */
interface Envelope {
  readonly bytes: Buffer;
  readonly prefix: number;
  readonly views: Buffer[];
}
const envelopes = new Map<string, Envelope>();

function put(bytes: Buffer, out: Buffer, at: number): number {
  for (let i = 0; i < bytes.length; i++) out[at++] = bytes[i]!;
  return at;
}

/**
 * A list page's envelope up to its `data` array, as a Buffer of exactly its bytes (valid until the next
 * page of the collection is made). Was: the prefix copied by `Buffer#copy` (on Node 20 a view and
 * megamorphic argument checks) into a shared buffer, and a view of it made by the join per request.
 */
function pageHead(name: string, page: number, limit: number, total: number, pages: number): Buffer {
  let e = envelopes.get(name);
  if (e === undefined) {
    const prefix = Buffer.from(`{"success":true,"version":"v1","resource":"${name}","pagination":{"page":`);
    const bytes = Buffer.allocUnsafeSlow(512);
    prefix.copy(bytes);
    envelopes.set(name, (e = { bytes, prefix: prefix.length, views: [] }));
  }
  const head = e.bytes;
  let at = writeNumber(page, head, e.prefix);
  at = writeNumber(limit, head, put(LIMIT, head, at));
  at = writeNumber(total, head, put(TOTAL, head, at));
  at = writeNumber(pages, head, put(PAGES, head, at));
  at = put(DATA, head, at);
  return (e.views[at] ??= Buffer.from(head.buffer, head.byteOffset, at));
}

/** `today` is the serving day as yyyymmdd, for the fields that depend on it (celebrity `age`). */
export function listPage(index: CollectionIndex, query: string, today: number): Outcome {
  let plan;
  try {
    plan = parseListQuery(index.def, query);
  } catch (err) {
    if (err instanceof ParameterError) return { ok: false, code: 'INVALID_PARAMETER', message: err.message };
    throw err;
  }
  if (isFirstPage(plan)) return { ok: true, body: firstPage(index, plan, today) };
  return { ok: true, body: built(index, plan, today) };
}

/** The page of `plan` joined from the records: one allocation of the exact size, a slice of a shared slab. */
function built(index: CollectionIndex, plan: QueryPlan, today: number): Buffer {
  const { total, ids } = executeQuery(index, plan);
  const head = pageHead(index.def.name, plan.page, plan.limit, total, Math.ceil(total / plan.limit));
  return listBody(index, ids, today, head, head.length);
}

/** Page 1 of a sort order at the default limit, nothing filtered or searched: a collection's first pages. */
const isFirstPage = (plan: QueryPlan): boolean =>
  plan.page === 1 && plan.limit === DEFAULT_LIMIT && plan.filters.length === 0 && plan.range === null && plan.search === null;

/**
 * A collection's first pages, one per sort order, as served on `day` (0 when no field is late): made on
 * their first ask and kept with the index they are of (a reload's index gets its own). The most asked
 * pages there are, under any spelling of their query and any parameter the API ignores: a first request
 * for one (a target not asked before, which kept-pages.ts has not kept) joined 20 records scattered over
 * the arena (about 10 µs at 100k, read from memory no cache holds); now a lookup.
 */
const firstPages = new WeakMap<CollectionIndex, Map<string, { day: number; body: Buffer }>>();

function firstPage(index: CollectionIndex, plan: QueryPlan, today: number): Buffer {
  const day = index.def.late === undefined ? 0 : today;
  let bySort = firstPages.get(index);
  if (bySort === undefined) firstPages.set(index, (bySort = new Map()));
  const kept = bySort.get(plan.sort);
  if (kept !== undefined && kept.day === day) return kept.body;
  const slab = built(index, plan, today);
  const body = Buffer.allocUnsafeSlow(slab.length); // its own memory: the slab is written again by later requests
  slab.copy(body);
  releaseSendBuffer(slab); // read no more: the next page is built in its bytes (an arena's room is free again)
  bySort.set(plan.sort, { day, body });
  return body;
}

/** `today` is the serving day as yyyymmdd, for the fields that depend on it (celebrity `age`). */
export function detail(index: CollectionIndex, slug: string, today: number): Outcome {
  const id = slugId(index, slug);
  return id === -1 ? NOT_FOUND : { ok: true, body: detailBody(index, id, today) };
}
