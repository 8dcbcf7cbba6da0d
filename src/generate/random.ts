// Seeded randomness and unique slugs for the generator: the same seed gives the same data everywhere.
import { fold } from '../data/fold.ts';

/** sfc32 seeded from a cyrb128 hash of a string: small, fast, and the same on every platform. */
export class Rng {
  private s: Uint32Array;
  constructor(seed: string) {
    let [h1, h2, h3, h4] = [1779033703, 3144134277, 1013904242, 2773480762];
    for (let i = 0; i < seed.length; i++) {
      const k = seed.charCodeAt(i);
      h1 = h2 ^ Math.imul(h1 ^ k, 597399067); h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
      h3 = h4 ^ Math.imul(h3 ^ k, 951274213); h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
    }
    this.s = Uint32Array.of(h1, h2, h3, h4);
    for (let i = 0; i < 12; i++) this.next();
  }
  next(): number {
    const s = this.s;
    const t = (((s[0]! + s[1]!) | 0) + s[3]!) | 0;
    s[3] = s[3]! + 1; s[0] = s[1]! ^ (s[1]! >>> 9); s[1] = s[2]! + (s[2]! << 3);
    s[2] = ((s[2]! << 21) | (s[2]! >>> 11)) + t;
    return (t >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number { return lo + Math.floor(this.next() * (hi - lo + 1)); }
  chance(p: number): boolean { return this.next() < p; }
  pick<T>(xs: readonly T[]): T { return xs[Math.floor(this.next() * xs.length)]!; }
  /** Between min and max distinct elements, in their list order (selection sampling: no shuffle, no copy). */
  some<T>(xs: readonly T[], min: number, max: number): T[] {
    const out: T[] = [];
    for (let i = 0, want = Math.min(xs.length, this.int(min, max)); out.length < want; i++) {
      if (this.next() * (xs.length - i) < want - out.length) out.push(xs[i]!);
    }
    return out;
  }
  /** A Mongo-style ObjectId: creation second, random middle, per-collection counter (unique up to 16M records). */
  objectId(ms: number, index: number): string {
    const hex = (v: number, w: number) => v.toString(16).padStart(w, '0');
    return hex(Math.floor(ms / 1000), 8) + hex(this.int(0, 0xffffff), 6) + hex(this.int(0, 0xffff), 4) + hex(index & 0xffffff, 6);
  }
  /** Index in [0, n) biased towards 0: a few celebrities and movies get most of the coverage. */
  skewed(n: number): number { return Math.floor(n * this.next() ** 2); }
  permutation(n: number): Uint32Array {
    const p = new Uint32Array(n).map((_, i) => i);
    for (let i = n - 1; i > 0; i--) { const j = this.int(0, i); [p[i], p[j]] = [p[j]!, p[i]!]; }
    return p;
  }
}

/** Draws every card once per shuffle, so each filter value gets its share even in a small data set. */
export class Deck<T> {
  private left: T[] = [];
  constructor(private readonly rng: Rng, private readonly cards: readonly T[]) {}
  draw(): T {
    if (this.left.length === 0) this.left = [...this.rng.permutation(this.cards.length)].map((i) => this.cards[i]!);
    return this.left.pop()!;
  }
}

export function slugify(text: string): string {
  // Most titles are plain ASCII: skip the Unicode normalisation, the costliest step at large scales.
  let s = (/^[\x20-\x7e]*$/.test(text) ? text.toLowerCase() : fold(text)).replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  if (s.length > 80) s = s.slice(0, s.lastIndexOf('-', 80)).replace(/-+$/, '');
  return s || 'item';
}

/** Unique slugs per collection: a repeated title gets -2, -3... (a counter per base keeps this O(1)). */
export class SlugBook {
  private used = new Set<string>();
  private next = new Map<string, number>();
  /** Redraws a few times to avoid a duplicate title (small data sets stay unique); then accepts a suffix. */
  fresh(draw: () => string): [text: string, slug: string] {
    let text = draw();
    let base = slugify(text);
    // Past ten thousand titles the vocabulary is used up and redraws only cost time.
    const tries = this.used.size < 10_000 ? 4 : 0;
    for (let t = 0; t < tries && this.used.has(base); t++) base = slugify((text = draw()));
    let n = this.next.get(base) ?? 1;
    let slug = n === 1 ? base : `${base}-${n}`;
    while (this.used.has(slug)) slug = `${base}-${++n}`;
    this.next.set(base, n + 1);
    this.used.add(slug);
    return [text, slug];
  }
}
