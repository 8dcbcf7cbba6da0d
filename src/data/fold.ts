// Case- and accent-insensitive folding for search and filters (CONTRACT 3: "beyonce" finds "Beyoncé").
const MARKS = /\p{M}/gu;
/** Text NFKD leaves as it is and with no marks to drop: most values, folded by lower-casing alone. */
const ASCII = /^[\x00-\x7f]*$/;

/** NFKD, drop combining marks, lower case. Applied once per value at load and once per query value. */
export function fold(text: string): string {
  return ASCII.test(text) ? text.toLowerCase() : text.normalize('NFKD').replace(MARKS, '').toLowerCase();
}
