// After an edit of a file whose records others show values of as their own derived fields while naming
// them by a reference they do not serve (a review shows its movie's title, poster and details, and
// names the movie by a slug no answer shows), which of those records were made from the edited ones
// (issue 19: a movie title edit built the 100k reviews whole, 5x the movies file's own time). The
// reference is not served, so the records are found by what they show: a derived list field whose
// value is a field of the linked record as it is (a review's `movieTitle`, the movie's `title`), sought
// as bytes (`"movieTitle":"Old Title"`, as the arena holds it: json-bytes.ts writes what
// JSON.stringify writes) in the list items, each record found decoded and told apart by all its
// derived fields: the linked records (before the edit) of that value that would give it those
// fields. A record of one value two such records would give the same fields cannot be told apart:
// then null (the caller builds the collection whole, as it also does for a slug it names changed).
import { RESOURCES } from '../resources/index.ts';
import type { CollectionName, LinkContext, LinkedRecord, ResourceDefinition, SourceRecord } from '../resources/types.ts';
import { ownFieldsJson } from './detail-layout.ts';
import { fragment, type Fragments } from './fragments.ts';
import { memberKey } from './json-bytes.ts';
import { slugOf, type CollectionIndex } from './indexes.ts';
import { knownCollection } from './known.ts';

/** More distinct values sought than this (each a scan of the list arena): not patched. */
const MAX_VALUES = 64;
/** More record pairs compared than this for one value (a title many records share): not patched. */
const MAX_PAIRS = 1 << 16;

/**
 * How `def`'s records name `target`'s (its one top-level reference field, not served) and which
 * derived list field of theirs is a list field of the linked record as it is (`shows`, `from`):
 * found by linking a record to one whose fields hold markers; null when there is none.
 */
export function shownField(def: ResourceDefinition, target: CollectionName): { readonly ref: string; readonly shows: string; readonly from: string } | null {
  const refs = Object.entries(def.source.properties).flatMap(([k, s]) => (s.type === 'string' && s.ref === target ? [k] : []));
  const served = new Set([...def.listFields, ...def.detailFields].map((f) => (typeof f === 'string' ? f : f.name)));
  if (refs.length !== 1 || served.has(refs[0]!)) return null;
  const of = RESOURCES[target];
  const probe: Record<string, unknown> = {};
  for (const f of of.readByLinks ?? []) probe[f] = `\u0000${f}`;
  let made: LinkedRecord;
  try {
    made = def.link({ [refs[0]!]: 'probe' } as SourceRecord, { get: (c) => (c === target ? (probe as SourceRecord) : undefined), referrers: () => [] });
  } catch {
    return null;
  }
  for (const f of def.listFields) {
    if (typeof f !== 'string' || !Object.hasOwn(def.derived.properties, f)) continue;
    const v = made[f];
    if (typeof v === 'string' && v.charCodeAt(0) === 0 && of.listFields.includes(v.slice(1))) return { ref: refs[0]!, shows: f, from: v.slice(1) };
  }
  return null;
}

/** The ids of the records of `f` whose bytes hold `needle` (ascending, each once). */
function holding(f: Fragments, needle: Buffer): number[] {
  const out: number[] = [];
  const n = f.starts.length - 1;
  const end = f.starts[n]!;
  for (let at = f.bytes.indexOf(needle, f.starts[0]!); at >= 0 && at < end; at = f.bytes.indexOf(needle, at + 1)) {
    // The record whose bytes hold `at`: the last start at or before it.
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (f.starts[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    if (out[out.length - 1] !== lo) out.push(lo);
  }
  return out;
}

/** Record `id` of `ix` as its list item and detail-only text show it (a plan's index). */
export function decoded(ix: CollectionIndex, id: number): Record<string, unknown> {
  return { ...(JSON.parse(fragment(ix.list, id, 20000101).toString('utf8')) as object), ...(JSON.parse(ownFieldsJson(ix.detail, id)) as object) };
}

/**
 * The records of `old` (the index of a collection that links to `target`'s records as shownField
 * says, built with `was`: `target`'s index before an edit of its file) made from records `changed`
 * of `target` (ids in `was` and after the edit alike: changedRecords), each with the id of that
 * record; or why they cannot be told (the caller builds it whole). A changed record whose slug
 * changed may be named by none.
 */
export function linkHolders(old: CollectionIndex, target: CollectionName, was: CollectionIndex, changed: ReadonlyMap<number, readonly string[]>): Map<number, number> | string {
  const def = old.def;
  const shown = shownField(def, target);
  if (shown === null) return `${def.name} holds ${target} records otherwise`;
  const before = knownCollection(was);
  /** The changed records (before the edit) by the value they gave the shown field. */
  const byValue = new Map<string, number[]>();
  for (const t of changed.keys()) {
    // (Added at the end: no record of a file that did not change names it.)
    if (t >= was.size) continue;
    const v = before.get(slugOf(was, t))![shown.from];
    if (typeof v !== 'string') return `a ${shown.from} that is not text`;
    const list = byValue.get(v);
    if (list === undefined) byValue.set(v, [t]);
    else list.push(t);
  }
  if (byValue.size > MAX_VALUES) return 'too many values sought';
  const derived = Object.keys(def.derived.properties);
  const shows = (r: Record<string, unknown>) => JSON.stringify(derived.map((f) => r[f] ?? null));
  const out = new Map<number, number>();
  for (const [v, ts] of byValue) {
    const text = JSON.stringify(v);
    // Every record of `target` that gave the value (changed or not), and every record that shows it.
    const givers = holding(was.list, Buffer.concat([memberKey(shown.from), Buffer.from(text)])).filter((m) => before.get(slugOf(was, m))![shown.from] === v);
    if (!ts.every((t) => givers.includes(t))) return `a ${shown.from} not found`;
    const found = holding(old.list, Buffer.concat([memberKey(shown.shows), Buffer.from(text)]));
    if (givers.length * found.length > MAX_PAIRS) return `a ${shown.from} too many records share`;
    for (const id of found) {
      const r = decoded(old, id);
      if (r[shown.shows] !== v) continue;
      const held = shows(r);
      const from = givers.filter((m) => {
        const ctx: LinkContext = { get: (c) => (c === target ? before.get(slugOf(was, m)) : undefined), referrers: () => [] };
        return shows(def.link({ ...r, [shown.ref]: slugOf(was, m) } as SourceRecord, ctx)) === held;
      });
      if (!from.some((m) => changed.has(m))) continue;
      if (from.length !== 1) return 'records that give the same values';
      if (changed.get(from[0]!)!.includes('slug')) return 'a slug changed that records name';
      out.set(id, from[0]!);
    }
  }
  return out;
}
