// After an edit of movies.json patched (patch.ts), whether the celebrities' index needs anything
// again (issue 19: any movie edit built the 100k celebrities whole, for their filmographies). A
// celebrity's filmography is read back from the movies whose casts name it (resources/celebrities.ts):
// its index holds, per celebrity, the ids of those movies (holes filled from the movies' list items
// as they are served: a title, slug or release date edit shows without a rebuild) in the order the
// link sorts them (newest release first, ties by _id), and each entry's character and role. So the
// index stands when, for every celebrity an edited movie names before or after the edit, the
// entries made from the movies as they are now are those it holds; else only the celebrities whose
// entries differ (a cast entry, character or role, a release date that reorders, a celebrity added to
// or taken off a cast) are written again (a character edit at 100k built the celebrities whole).
import type { Backref, LinkContext, LinkedRecord, SourceRecord } from '../resources/types.ts';
import { timeKey } from '../resources/types.ts';
import { detailBytes, type Embed } from './detail-layout.ts';
import { slugId, slugOf, type CollectionIndex, type Targets } from './indexes.ts';
import { knownCollection } from './known.ts';
import { decoded } from './link-holders.ts';
import { rewritten, type PatchResult } from './patch.ts';
import { RECORD_GROUP } from './record-groups.ts';

/** More celebrities whose filmographies changed than this share: built whole (each is decoded and linked). */
const MAX_REWRITTEN_SHARE = 0.25;

/** One filmography entry as the index keeps it: the movie's id, and the cast entry's character and role. */
interface Entry {
  readonly movie: number;
  readonly character: unknown;
  readonly role: unknown;
}

/**
 * The celebrities of `celebs` (the celebrities' index built with `was`, the movies' index before an
 * edit of movies.json) whose filmographies a full build with `now` (the movies patched: records `ids`
 * read again, `sources` their source records; records past `now.size` removed from the end) makes
 * otherwise, each
 * with the entries it has now in the order the link meets them (movie, then cast order: the link
 * sorts them); null when that cannot be told (a movie not edited that names a celebrity twice, a
 * cast naming a celebrity the index does not hold).
 */
function filmographyChanges(celebs: CollectionIndex, was: CollectionIndex, now: CollectionIndex, ids: Int32Array, sources: readonly SourceRecord[]): Map<number, Entry[]> | null {
  const e = celebs.embeds.find((x) => x.target === 'movies' && x.starts !== null);
  if (e === undefined || celebs.def.name !== 'celebrities' || ids.length !== sources.length) return null;
  /** Movies whose entries may differ: those read again, and those removed from the end. */
  const edited = new Uint8Array(Math.max(was.size, now.size));
  for (const id of ids) edited[id] = 1;
  for (let id = now.size; id < was.size; id++) edited[id] = 1;
  // The celebrities such a movie names, before (its holes) and after (its cast now).
  const affected = new Set<number>();
  const starts = e.starts!;
  for (let c = 0; c < celebs.size; c++) for (let k = starts[c]!; k < starts[c + 1]!; k++) if (edited[e.ids[k]!] === 1) affected.add(c);
  /** Per celebrity, the entries the edited movies give it now, in file order (movie, then cast order). */
  const named = new Map<number, Entry[]>();
  for (let j = 0; j < ids.length; j++) {
    for (const entry of (sources[j]!.cast ?? []) as readonly Record<string, unknown>[]) {
      if (typeof entry?.celebrity !== 'string') continue;
      const c = slugId(celebs, entry.celebrity);
      if (c < 0) return null;
      affected.add(c);
      let list = named.get(c);
      if (list === undefined) named.set(c, (list = []));
      list.push({ movie: ids[j]!, character: entry.character ?? null, role: entry.role ?? null });
    }
  }
  const out = new Map<number, Entry[]>();
  if (affected.size === 0) return out;
  const embeds: Embed[] = celebs.embeds.map((x) => ({ ...x, index: x.target === 'movies' ? was : null }));
  if (embeds.some((x) => x.index === null)) return null;
  const movies = knownCollection(now);
  /** A movie's release time and _id as the link sorts by them (the edited ones from their sources). */
  const sortKeys = new Map<number, { readonly time: number; readonly id: string }>();
  const keyOf = (m: number) => {
    let k = sortKeys.get(m);
    if (k === undefined) {
      const j = edited[m] === 1 ? binarySearch(ids, m) : -1;
      const r = j >= 0 ? sources[j]! : movies.get(slugOf(now, m))!;
      sortKeys.set(m, (k = { time: timeKey(r.releaseDate) ?? -Infinity, id: r._id as string }));
    }
    return k;
  };
  for (const c of affected) {
    const data = (JSON.parse(detailBytes(celebs.list, celebs.detail, embeds, c, 20000101).toString('utf8')) as { data: { filmography?: { character?: unknown; role?: unknown }[] } }).data;
    const held = data.filmography ?? [];
    if (held.length !== starts[c + 1]! - starts[c]!) return null;
    const before: Entry[] = held.map((f, i) => ({ movie: e.ids[starts[c]! + i]!, character: f.character ?? null, role: f.role ?? null }));
    // Now: the entries of the movies not edited as they are held, those of the edited ones from their
    // casts, in file order (the order the link meets them), sorted as the link sorts them.
    const kept = before.filter((x) => edited[x.movie] !== 1);
    // (A movie not edited that names it twice: the order of its two entries in the cast is not held.)
    if (new Set(kept.map((x) => x.movie)).size !== kept.length) return null;
    const films = [...kept, ...(named.get(c) ?? [])].sort((a, b) => a.movie - b.movie);
    // The link's sort, as it is (resources/celebrities.ts), over the entries in the order it meets them.
    const time = films.map((f) => keyOf(f.movie).time);
    const id = films.map((f) => keyOf(f.movie).id);
    const after = films.map((_, i) => i).sort((i, j) => time[j]! - time[i]! || (id[i]! < id[j]! ? -1 : 1)).map((i) => films[i]!);
    let same = after.length === before.length;
    for (let i = 0; i < after.length && same; i++) {
      const a = after[i]!;
      const b = before[i]!;
      same = a.movie === b.movie && JSON.stringify(a.character) === JSON.stringify(b.character) && JSON.stringify(a.role) === JSON.stringify(b.role);
    }
    if (!same) out.set(c, films);
  }
  return out;
}

/**
 * `celebs` (as filmographyChanges) with the celebrities whose filmographies differ after the edit
 * written again (patch.ts rewritten): each decoded from its served JSON (list item and detail-only
 * text) and linked as a full build links it (resources/celebrities.ts), to the movies that name it
 * now (`now`'s records, in file order, each with its cast entry); or why not (then it is built).
 * Nothing else of the index depends on a filmography (not a sort key, filter value or search text).
 * `owned`: as patch.ts relinked's.
 */
export function filmographiesPatched(celebs: CollectionIndex, was: CollectionIndex, now: CollectionIndex, ids: Int32Array, sources: readonly SourceRecord[], targets: Targets, owned: boolean): PatchResult {
  const changes = filmographyChanges(celebs, was, now, ids, sources);
  if (changes === null) return { index: null, why: 'filmographies not told' };
  if (changes.size === 0) return { index: celebs, records: 0 };
  if (changes.size > Math.max(RECORD_GROUP * 4, celebs.size * MAX_REWRITTEN_SHARE)) return { index: null, why: 'too many filmographies changed' };
  const movies = knownCollection(now);
  const order = Int32Array.from(changes.keys()).sort();
  const records: LinkedRecord[] = [];
  for (const c of order) {
    const slug = slugOf(celebs, c);
    const films: Backref[] = changes.get(c)!.map((f) => ({ record: movies.get(slugOf(now, f.movie))!, holder: { character: f.character, role: f.role } }));
    const ctx: LinkContext = { get: () => undefined, referrers: (collection, s, from) => (collection === 'celebrities' && s === slug && from === 'movies' ? films : []) };
    records.push(celebs.def.link(decoded(celebs, c) as SourceRecord, ctx));
  }
  return rewritten(celebs, order, records, (t) => (t === 'movies' ? now : targets(t)), false, owned);
}

/** The index of `x` in ascending `a`, or -1. */
function binarySearch(a: Int32Array, x: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] === x) return mid;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
