// The folded search texts without a copy where the list arena already holds them (issue 19): a
// search text is most often one list field's value (an outfit's title, a celebrity's name), and for
// plain ASCII without escapes its folded form is that value's bytes lower-cased. Such a record's text
// is read from its list item when a search has to confirm a match (a trigram twice in the text: rare
// per request, never per page item); only the others keep theirs in the string table.
import type { LinkedRecord, ResourceDefinition } from '../resources/types.ts';
import type { Fragments } from './fragments.ts';

/**
 * Where the texts of `derived` records are: the value of list field `field` (a boundary the detail
 * plan cuts at, or 0), `keyLength` bytes past that boundary's offset (`,"title":`), then a quote.
 */
export interface SearchFrom {
  readonly field: number;
  readonly keyLength: number;
  /** A bit per record: its text is its list value's bytes lower-cased (its table entry is empty). */
  readonly derived: Uint32Array;
}

const QUOTE = 0x22;

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

/** The key before list field `field`'s value in a list item: `,"name":` (no comma for the first field). */
export function searchKeyLength(def: ResourceDefinition, field: number): number {
  return (field > 0 ? 1 : 0) + JSON.stringify(def.listFields[field] as string).length + 1;
}

/**
 * True when `folded` is the lower-cased ASCII of the JSON string at `p` in `bytes` (its opening
 * quote), with no escape in it: that record's text can be read from there.
 */
export function derivable(bytes: Uint8Array, p: number, folded: string): boolean {
  if (bytes[p] !== QUOTE) return false;
  let i = 0;
  for (let q = p + 1; ; q++, i++) {
    const b = bytes[q]!;
    if (b === QUOTE) return i === folded.length;
    if (b === 0x5c || b >= 0x80 || i >= folded.length || lower(b) !== folded.charCodeAt(i)) return false;
  }
}

const lower = (b: number): number => (b >= 0x41 && b <= 0x5a ? b + 0x20 : b);

/** True when the derived text at `p` (the value's first byte, after its quote) contains `needle`. */
export function derivedIncludes(bytes: Uint8Array, p: number, needle: string): boolean {
  if (needle.length === 0) return true;
  const first = needle.charCodeAt(0);
  for (let s = p; bytes[s] !== QUOTE; s++) {
    if (lower(bytes[s]!) !== first) continue;
    if (matchesAt(bytes, s, needle)) return true;
  }
  return false;
}

/** True when the derived text at `p` holds `needle` at unit `at` (its units are its bytes). */
export function derivedIncludesAt(bytes: Uint8Array, p: number, needle: string, at: number): boolean {
  if (at < 0) return false;
  // The text has no quote: the closing one ends it, so `at` past the end meets it first.
  for (let s = p; s < p + at; s++) if (bytes[s] === QUOTE) return false;
  return matchesAt(bytes, p + at, needle);
}

/** `needle` at `s`, the closing quote (never in a derived text) ending any match. */
function matchesAt(bytes: Uint8Array, s: number, needle: string): boolean {
  for (let i = 0; i < needle.length; i++) {
    const b = bytes[s + i]!;
    if (b === QUOTE || lower(b) !== needle.charCodeAt(i)) return false;
  }
  return true;
}

/** Whether record `id`'s text is derived (SearchFrom.derived). */
export const isDerived = (from: SearchFrom, id: number): boolean => (from.derived[id >>> 5]! & (1 << (id & 31))) !== 0;

/** Record `id`'s derived text, decoded (tests and tools). */
export function derivedText(list: Fragments, p: number): string {
  return list.bytes.toString('latin1', p, list.bytes.indexOf(QUOTE, p)).toLowerCase();
}
