// The baseline of `bench:boot` (issue 19), run as a child: one thread reads each data file and
// JSON.parses it, nothing else. A file V8 can hold as one string is parsed whole; a larger one is cut
// at record boundaries (a byte scan of strings, escapes and depth) and parsed a batch of records at
// a time. Prints {"total": s, "files": {name: s}, "records": {name: n}} on stdout.
//   node --import tsx test/bench/read-parse.ts DATA_DIR
import { openSync, readSync, closeSync, fstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Below V8's longest string (2^29 - 24 units on 64-bit), with room for multi-byte text. */
const WHOLE_MAX = Number(process.env.BENCH_WHOLE_MAX ?? 400e6);
const CHUNK = 64 << 20;
const BATCH = 32 << 20;

/** Parses a top-level array a batch of records at a time; returns the number of records. */
function parseSliced(file: string): number {
  const fd = openSync(file, 'r');
  const size = fstatSync(fd).size;
  let carry = Buffer.alloc(0);
  let records = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let pos = 0; pos < size; ) {
    const chunk = Buffer.allocUnsafe(Math.min(CHUNK, size - pos));
    const n = readSync(fd, chunk, 0, chunk.length, pos);
    pos += n;
    const buf = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n);
    const scanFrom = carry.length;
    let start = -1; // first byte of the batch
    let lastEnd = -1; // one past the last complete record
    // Carry is always a prefix of unfinished records whose state was reset: rescan it.
    depth = 0;
    inString = false;
    escaped = false;
    let i = 0;
    if (scanFrom === 0 && records === 0) {
      i = buf.indexOf(0x5b) + 1; // past the opening [
    }
    for (; i < buf.length; i++) {
      const c = buf[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
        continue;
      }
      if (c === 0x22) inString = true;
      else if (c === 0x7b || c === 0x5b) {
        if (depth++ === 0 && start < 0) start = i;
      } else if (c === 0x7d || c === 0x5d) {
        if (depth === 0) break; // the closing ] of the file
        if (--depth === 0) {
          lastEnd = i + 1;
          records++;
          if (lastEnd - start >= BATCH) {
            JSON.parse(`[${buf.toString('utf8', start, lastEnd)}]`);
            start = -1;
          }
        }
      }
    }
    if (start >= 0 && lastEnd > start) {
      JSON.parse(`[${buf.toString('utf8', start, lastEnd)}]`);
      start = -1;
    }
    // The unfinished record (after the last complete one) moves to the next chunk.
    const rest = lastEnd >= 0 ? lastEnd : scanFrom === 0 && records === 0 ? buf.indexOf(0x5b) + 1 : 0;
    carry = Buffer.from(buf.subarray(rest));
    // Drop the separating comma and whitespace so the carry starts at a record.
    let k = 0;
    while (k < carry.length && (carry[k] === 0x2c || carry[k]! <= 0x20)) k++;
    carry = carry.subarray(k);
  }
  closeSync(fd);
  return records;
}

const dir = process.argv[2]!;
const files: Record<string, number> = {};
const records: Record<string, number> = {};
const t0 = performance.now();
for (const name of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
  const t = performance.now();
  const file = join(dir, name);
  const fd = openSync(file, 'r');
  const size = fstatSync(fd).size;
  closeSync(fd);
  records[name] = size <= WHOLE_MAX ? (JSON.parse(readFileSync(file, 'utf8')) as unknown[]).length : parseSliced(file);
  files[name] = (performance.now() - t) / 1000;
}
process.stdout.write(JSON.stringify({ total: (performance.now() - t0) / 1000, files, records }));
