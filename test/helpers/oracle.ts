// A brute-force query engine straight from the resource definitions: the reference the indexed
// engine is checked against. Slow on purpose: filter every record, then sort them all.
import { fold } from '../../src/data/fold.ts';
import type { LinkedRecord, ResourceDefinition } from '../../src/resources/types.ts';

export interface OracleQuery {
  readonly sort?: string;
  readonly search?: string;
  readonly page?: number;
  readonly limit?: number;
  /** Filter param -> raw value as a client would send it (ranges: minRating / maxRating). */
  readonly filters?: Readonly<Record<string, string>>;
}

function matches(def: ResourceDefinition, r: LinkedRecord, q: OracleQuery): boolean {
  for (const f of def.filters) {
    if (f.kind === 'range') {
      const min = q.filters?.[f.minParam];
      const max = q.filters?.[f.maxParam];
      if (min === undefined && max === undefined) continue;
      const v = f.get(r);
      if (v === null || v < Number(min ?? f.lowest) || v > Number(max ?? f.highest)) return false;
      continue;
    }
    const want = q.filters?.[f.param];
    if (want === undefined) continue;
    const got = f.get(r);
    const values = got === null || got === undefined ? [] : Array.isArray(got) ? got : [got];
    const ok = values.some((v) => (f.kind === 'text' ? fold(String(v).trim()) === fold(want.trim()) : String(v) === want));
    if (!ok) return false;
  }
  const search = q.search?.trim();
  if (search) return fold(def.searchText(r) ?? '').includes(fold(search));
  return true;
}

export function compareBy(def: ResourceDefinition, sortName: string): (a: LinkedRecord, b: LinkedRecord) => number {
  const sort = def.sorts.find((s) => s.name === sortName)!;
  const key = (r: LinkedRecord) => {
    const k = sort.key(r);
    return k === null || k === undefined ? null : sort.type === 'text' ? fold(String(k)) : Number(k);
  };
  return (a, b) => {
    const ka = key(a), kb = key(b);
    if (ka !== kb) {
      if (ka === null) return 1;
      if (kb === null) return -1;
      return (ka < kb ? -1 : 1) * (sort.dir === 'asc' ? 1 : -1);
    }
    return a._id < b._id ? -1 : a._id > b._id ? 1 : 0;
  };
}

/** All matching records in order, the total, and the requested page. */
export function bruteForce(def: ResourceDefinition, records: readonly LinkedRecord[], q: OracleQuery) {
  const all = records.filter((r) => matches(def, r, q)).sort(compareBy(def, q.sort ?? def.sorts[0]!.name));
  const limit = Math.min(q.limit ?? 20, 50);
  const page = q.page ?? 1;
  return { all, total: all.length, pages: Math.ceil(all.length / limit), page: all.slice((page - 1) * limit, page * limit) };
}
