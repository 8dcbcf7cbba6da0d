// The keys of one equality filter met before, found by a plain value compared where it stands in the
// query (issue 20). A first filter page's value was sliced, trimmed, tested by a regex, lower-cased
// and hashed (about 700 instructions of a parse); a known one is now a hash of its characters as
// fold() would make them and a compare in place, with no string made.

/** Slots per filter, a power of 2: a value whose slot another key took is made by the general path and takes it back. */
const SLOTS = 256;
/** Longer values take the general path: a filter's slots hold at most 256 short keys. */
const LONGEST = 64;

/** A key as the plan carries it; `alone` is the plan's filters when it is the query's only filter. */
export interface KnownKey {
  readonly key: string;
  readonly alone: readonly { readonly param: string; readonly key: string }[];
}

/** FNV-1a over a value's characters, A-Z as a-z (for every filter: an exact one's keys then share a slot with their other cases). */
const HASH_START = 0x811c9dc5;
const hashStep = (h: number, c: number): number => Math.imul(h ^ (c >= 65 && c <= 90 ? c + 32 : c), 0x01000193);
const slotOf = (h: number): number => (h ^ (h >>> 16)) & (SLOTS - 1);

/**
 * Keys by a hash of their characters. `folds`: a text filter's value is matched with ASCII upper case
 * as lower case (fold() of printable ASCII is its toLowerCase()); other kinds' values match exactly.
 */
export class KnownKeys {
  private readonly slots: (KnownKey | undefined)[] = new Array<KnownKey | undefined>(SLOTS).fill(undefined);

  constructor(
    private readonly param: string,
    private readonly folds: boolean,
    values: readonly string[] = [],
  ) {
    for (const value of values) this.note(value);
  }

  /**
   * The key noted for the value `text[from, to)`, which holds no '%' or '+' (the caller checked), or
   * undefined. Noted keys are printable ASCII and spaces with no space at either end (note()), so a
   * value with a space at an end, a control or a non-ASCII character (which trim() or fold() may
   * change) is never found equal to one.
   */
  find(text: string, from: number, to: number): KnownKey | undefined {
    if (to - from > LONGEST) return undefined;
    let h = HASH_START;
    for (let i = from; i < to; i++) h = hashStep(h, text.charCodeAt(i));
    const known = this.slots[slotOf(h)];
    if (known === undefined) return undefined;
    const key = known.key;
    if (key.length !== to - from) return undefined;
    for (let i = 0; i < key.length; i++) {
      let c = text.charCodeAt(from + i);
      if (this.folds && c >= 65 && c <= 90) c += 32;
      if (c !== key.charCodeAt(i)) return undefined;
    }
    return known;
  }

  /**
   * As find(), for a value with '%' or '+' in it, found as decodeURIComponent would decode it after '+'
   * became a space: `South%20Korean` or `South+Korean` finds `south korean`. An escape of anything
   * but printable ASCII or a space, or a broken one, finds nothing (the general path decodes it or
   * answers the 400), so every character found equal to a key's is one that decoding gives.
   */
  findEscaped(text: string, from: number, to: number): KnownKey | undefined {
    let h = HASH_START;
    let length = 0;
    for (let i = from; i < to; i++, length++) {
      let c = text.charCodeAt(i);
      if (c === 37) {
        c = escapeAt(text, i, to);
        if (c < 0x20 || c > 0x7e) return undefined;
        i += 2;
      } else if (c === 43) c = 32;
      h = hashStep(h, c);
    }
    const known = this.slots[slotOf(h)];
    if (known === undefined) return undefined;
    const key = known.key;
    if (key.length !== length) return undefined;
    for (let i = from, k = 0; k < length; i++, k++) {
      let c = text.charCodeAt(i);
      if (c === 37) {
        c = escapeAt(text, i, to);
        i += 2;
      } else if (c === 43) c = 32;
      if (this.folds && c >= 65 && c <= 90) c += 32;
      if (c !== key.charCodeAt(k)) return undefined;
    }
    return known;
  }

  /**
   * Notes `key`, a key the general path made of a value of this filter, and gives it as find() will;
   * undefined when it is not noted. Only printable ASCII and spaces, with no space at either end and no
   * upper case (for a text filter), is noted: find() gives a key for a value equal to it (upper case
   * lowered), and the general path makes that very key of such a value (trim() leaves it as it is; a
   * text filter's key of printable ASCII is its toLowerCase(); the others' is the value), where of
   * other text (spaces at an end, controls, non-ASCII) it may not.
   */
  note(key: string): KnownKey | undefined {
    if (key.length === 0 || key.length > LONGEST) return undefined;
    if (key.charCodeAt(0) === 32 || key.charCodeAt(key.length - 1) === 32) return undefined;
    let h = HASH_START;
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || (this.folds && c >= 65 && c <= 90)) return undefined;
      h = hashStep(h, c);
    }
    const slot = slotOf(h);
    const held = this.slots[slot];
    if (held?.key === key) return held;
    // Not frozen: the query's sites read these as they read the plans' other filter arrays (one shape).
    return (this.slots[slot] = { key, alone: [{ param: this.param, key }] });
  }
}

/** The byte `%XX` at `text[at]` stands for (XX two hex digits within `to`), or -1. */
function escapeAt(text: string, at: number, to: number): number {
  if (at + 2 >= to) return -1;
  const hi = hexDigit(text.charCodeAt(at + 1));
  const lo = hexDigit(text.charCodeAt(at + 2));
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const lower = c | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}
