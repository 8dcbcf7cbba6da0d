// The folded search texts without a copy where a search never reads them (issue 19). A search reads
// a record's text only to confirm a match its trigram positions leave open: a trigram twice in the
// text, or past position 254 (search-index.ts AMBIGUOUS), or a query of more than 384 units. A text
// with neither (half of the titles, nearly every name) is then never read but by such a query, so
// when it is the value of a list field (`(r) => r.title`) its table entry is left empty and that
// rare query decodes it from the record's list item.
import type { LinkedRecord, ResourceDefinition } from '../resources/types.ts';
import { fold } from './fold.ts';
import { memberKey, memberString } from './json-bytes.ts';
import { AMBIGUOUS } from './search-index.ts';

/** Which records' texts are their list field `field`'s value, folded (their table entry is empty). */
export interface SearchFrom {
  readonly field: number;
  /** A bit per record. */
  readonly derived: Uint32Array;
}

/**
 * The list field whose value a definition's search text is (`(r) => r.title`), or -1: found by
 * calling it on a record whose fields hold markers, so any other function of the record says -1.
 */
export function searchField(def: ResourceDefinition): number {
  const probe: Record<string, unknown> = {};
  def.listFields.forEach((f, i) => {
    if (typeof f === 'string') probe[f] = `\u0000${i}`;
  });
  let text: unknown;
  try {
    text = def.searchText(probe as LinkedRecord);
  } catch {
    return -1;
  }
  const m = typeof text === 'string' ? /^\u0000(\d+)$/.exec(text) : null;
  return m === null ? -1 : Number(m[1]);
}

// The trigrams of one text while decidedByGrams checks it: an open-addressing table of 512 slots (a
// text it checks has at most 255 trigrams), a slot in use when its stamp is this call's. A Set of
// 48-bit keys boxed a heap number per trigram: 1.5 s of a 100k first start.
const SEEN_SLOTS = 512;
const seenKeys = new Float64Array(SEEN_SLOTS);
const seenStamps = new Int32Array(SEEN_SLOTS);
let stamp = 0;

/** True when every trigram of `text` stands once and before AMBIGUOUS: its postings say where, and no search reads it but a long query. */
export function decidedByGrams(text: string): boolean {
  if (text.length - 3 >= AMBIGUOUS) return false;
  if (++stamp === 0x7fffffff) (stamp = 1), seenStamps.fill(0);
  for (let i = 0; i + 3 <= text.length; i++) {
    const a = text.charCodeAt(i), b = text.charCodeAt(i + 1), c = text.charCodeAt(i + 2);
    const key = (a * 65536 + b) * 65536 + c;
    let h = (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b) ^ Math.imul(c, 0xc2b2ae35)) >>> 23; // 9 bits
    for (; seenStamps[h] === stamp; h = (h + 1) & (SEEN_SLOTS - 1)) if (seenKeys[h] === key) return false;
    seenStamps[h] = stamp;
    seenKeys[h] = key;
  }
  return true;
}

/** Whether record `id`'s text is derived (SearchFrom.derived). */
export const isDerived = (from: SearchFrom, id: number): boolean => (from.derived[id >>> 5]! & (1 << (id & 31))) !== 0;

/**
 * A derived text from its record's list item (the JSON of one list item), folded as at load: the
 * field's string read from the item's bytes where it has no escape (json-bytes.ts memberString),
 * else the item parsed whole (an escape, or a value that is not a string: none, as a parse gives).
 */
export function derivedText(def: ResourceDefinition, from: SearchFrom, item: Buffer): string {
  const name = def.listFields[from.field] as string;
  const plain = memberString(item, memberKey(name));
  if (plain !== null) return fold(plain);
  const value = (JSON.parse(item.toString('utf8')) as Record<string, unknown>)[name];
  return fold(typeof value === 'string' ? value : '');
}
