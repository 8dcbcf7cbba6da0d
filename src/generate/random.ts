// Decks and unique slugs for the generator, drawn from the seeded random (src/random.ts).
import { fold } from '../data/fold.ts';
import type { Rng } from '../random.ts';

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
