// Case- and accent-insensitive folding for search and filters (CONTRACT 3: "beyonce" finds "Beyoncé").
const MARKS = /\p{M}/gu;

/** NFKD, drop combining marks, lower case. Applied once per value at load and once per query value. */
export function fold(text: string): string {
  return text.normalize('NFKD').replace(MARKS, '').toLowerCase();
}
