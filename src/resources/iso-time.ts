// Date.parse of the ISO forms the data holds, without the date parser for the common case (issue 19):
// a timestamp `YYYY-MM-DDTHH:MM:SS.sssZ` or a date `YYYY-MM-DD` is read digit by digit into Date.UTC.
// Anything else, or a field outside the ranges where the two agree without a doubt (a year before
// 100, which Date.UTC reads as 19xx; a day past 28; hour 24), goes to Date.parse itself.

/** The digit at `i` of `s`, or -1e6: a number made of digits with one missing is negative, whatever the others. */
function digit(s: string, i: number): number {
  const c = s.charCodeAt(i) - 0x30;
  return c >= 0 && c <= 9 ? c : -1e6;
}

const two = (s: string, i: number): number => digit(s, i) * 10 + digit(s, i + 1);

/** Milliseconds of `YYYY-MM-DD` at the start of `s` (and of `s.length` 10 or 24), or NaN where Date.parse must say. */
function datePart(s: string): number {
  if (s.charCodeAt(4) !== 0x2d || s.charCodeAt(7) !== 0x2d) return NaN;
  const y = two(s, 0) * 100 + two(s, 2);
  const m = two(s, 5);
  const d = two(s, 8);
  return y >= 100 && m >= 1 && m <= 12 && d >= 1 && d <= 28 ? Date.UTC(y, m - 1, d) : NaN;
}

/**
 * Date.parse of a timestamp in the form toISOString writes (24 units, years 0100-9999), or NaN for
 * any other string: then the caller asks Date.parse. A result that is not NaN is a string that
 * PATTERNS.timestamp matches and that Date.parse reads as the same time.
 */
export function canonicalTimestamp(s: string): number {
  if (s.length !== 24 || s.charCodeAt(10) !== 0x54 || s.charCodeAt(13) !== 0x3a || s.charCodeAt(16) !== 0x3a || s.charCodeAt(19) !== 0x2e || s.charCodeAt(23) !== 0x5a) return NaN;
  const day = datePart(s);
  const h = two(s, 11);
  const mi = two(s, 14);
  const sec = two(s, 17);
  const ms = two(s, 20) * 10 + digit(s, 22);
  return h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && sec >= 0 && sec <= 59 && ms >= 0 ? day + ((h * 60 + mi) * 60 + sec) * 1000 + ms : NaN;
}

/** Date.parse(value), exactly. */
export function parseIsoTime(value: string): number {
  const t = value.length === 24 ? canonicalTimestamp(value) : value.length === 10 ? datePart(value) : NaN;
  return t === t ? t : Date.parse(value);
}
