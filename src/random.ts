// Seeded randomness: the same seed gives the same sequence on every platform, for the sample-data
// generator (src/generate/) and the fault injector's sampled rules (src/http/faults.ts).

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
