// Writes a generated data set to disk, one file per collection, streamed in ~1 MB chunks.
import { Buffer } from 'node:buffer';
import { mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import type { CollectionName } from '../resources/types.ts';
import { collections, type DataRecord, type GenerateOptions } from './generate.ts';

const CHUNK = 1 << 20;

/** Writes `<dir>/<collection>.json` for the five collections, streaming in ~1 MB chunks; returns the counts. */
export async function writeDataset(dir: string, options: GenerateOptions & { pretty?: boolean }): Promise<Record<CollectionName, number>> {
  await mkdir(dir, { recursive: true });
  const counts = {} as Record<CollectionName, number>;
  for (const [name, records] of collections(options)) counts[name] = await writeArray(join(dir, `${name}.json`), records, options.pretty === true);
  return counts;
}

/** One record per line; pretty output is byte for byte `JSON.stringify(array, null, 2)`, for hand editing. */
async function writeArray(path: string, records: Iterable<DataRecord>, pretty: boolean): Promise<number> {
  const fh = await open(path, 'w');
  // Each record is encoded straight into one reused buffer: no large string is built, flattened or copied.
  const buf = Buffer.allocUnsafe(CHUNK);
  const encoder = new TextEncoder();
  let used = 0;
  const flush = async () => {
    for (let off = 0; off < used; ) off += (await fh.write(buf, off, used - off)).bytesWritten;
    used = 0;
  };
  /** Appends what fits; returns the rest, or null when all of it fitted. */
  const put = (text: string): string | null => {
    const { read, written } = encoder.encodeInto(text, buf.subarray(used));
    used += written;
    return read === text.length ? null : text.slice(read);
  };
  try {
    let n = 0;
    put('[');
    for (const r of records) {
      const text = (n++ === 0 ? '\n' : ',\n') + (pretty ? `  ${JSON.stringify(r, null, 2).replaceAll('\n', '\n  ')}` : JSON.stringify(r));
      // Awaiting only when the buffer is full keeps a million records from making a million promises.
      for (let rest = put(text); rest !== null; rest = put(rest)) await flush();
    }
    for (let rest = put(n === 0 ? ']\n' : '\n]\n'); rest !== null; rest = put(rest)) await flush();
    await flush();
    return n;
  } finally {
    await fh.close();
  }
}
