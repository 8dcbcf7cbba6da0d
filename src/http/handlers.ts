// The two generic resource handlers: a list page and a single record, assembled from the
// pre-serialized fragments of the snapshot (no JSON.stringify of records per request).
import { writeNumber } from '../data/fragments.ts';
import { detailBody, listBody, slugId, type CollectionIndex } from '../data/indexes.ts';
import { releaseSendBuffer } from '../data/send-buffer.ts';
import { ParameterError } from '../errors.ts';
import { parseListQuery } from '../query/parse.ts';
import { executeQuery } from '../query/execute.ts';
import { DEFAULT_LIMIT, MAX_LIMIT, type QueryPlan } from '../query/plan.ts';

/** A handler's answer: a 200 body, or the error to send. */
export type Outcome = { readonly ok: true; readonly body: Buffer } | { readonly ok: false; readonly code: 'NOT_FOUND' | 'INVALID_PARAMETER' | 'METHOD_NOT_ALLOWED'; readonly message?: string };

export const NOT_FOUND: Outcome = { ok: false, code: 'NOT_FOUND' };

/**
 * A collection's page envelope, written in place for the page being made: its bytes start with
 * `{"success":true,"version":"v1","resource":"<name>","pagination":{"page":` (written once), then the
 * page number (at most 16 digits) and the rest, which depends on the limit and the total alone (the
 * page count is theirs): kept in `tails` by both, copied whole by one `set`. `views[n]` is a Buffer over
 * its first n bytes, made once per length: the join copies the envelope from it whole, with no view
 * made per request.
 */
interface Envelope {
  readonly bytes: Buffer;
  readonly prefix: number;
  readonly views: Buffer[];
  /** `,"limit":L,"total":T,"pages":P},"data":[` by T * TAIL_KEY + L. */
  readonly tails: Map<number, Buffer>;
}
const envelopes = new Map<string, Envelope>();
/** Above any limit (plans are clamped to MAX_LIMIT): a tail's key is total * TAIL_KEY + limit. */
const TAIL_KEY = MAX_LIMIT + 1;
/** Tails kept per collection (a filter's total and a limit each): past it they start again. */
const TAILS_KEPT = 1024;

/**
 * A list page's envelope up to its `data` array, as a Buffer of exactly its bytes (valid until the next
 * page of the collection is made). Was: the prefix copied by `Buffer#copy` (on Node 20 a view and
 * megamorphic argument checks) into a shared buffer, and a view of it made by the join per request;
 * then the three numbers after the page and four constant parts written byte by byte (about 1,000
 * instructions of a first page, a typed array's bounds and map checked for every byte).
 */
function pageHead(name: string, page: number, limit: number, total: number, pages: number): Buffer {
  let e = envelopes.get(name);
  if (e === undefined) {
    const prefix = Buffer.from(`{"success":true,"version":"v1","resource":"${name}","pagination":{"page":`);
    const bytes = Buffer.allocUnsafeSlow(512);
    prefix.copy(bytes);
    envelopes.set(name, (e = { bytes, prefix: prefix.length, views: [], tails: new Map() }));
  }
  const head = e.bytes;
  const at = writeNumber(page, head, e.prefix);
  // pages is ceil(total / limit) (built): the tail is the limit's and the total's.
  const key = total * TAIL_KEY + limit;
  let tail = e.tails.get(key);
  if (tail === undefined) {
    tail = Buffer.from(`,"limit":${limit},"total":${total},"pages":${pages}},"data":[`, 'latin1');
    if (e.tails.size >= TAILS_KEPT) e.tails.clear();
    e.tails.set(key, tail);
  }
  head.set(tail, at);
  const end = at + tail.length;
  return (e.views[end] ??= Buffer.from(head.buffer, head.byteOffset, end));
}

/**
 * `today` is the serving day as yyyymmdd, for the fields that depend on it (celebrity `age`). The query
 * is `query[at..]`: a request's is read within its whole target (parseListQuery says why).
 */
export function listPage(index: CollectionIndex, query: string, today: number, at = 0): Outcome {
  let plan;
  try {
    plan = parseListQuery(index.def, query, at);
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
