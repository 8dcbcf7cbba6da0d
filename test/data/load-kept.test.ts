// What a load keeps of a collection others link to once it is indexed (src/data/load.ts keptFields):
// every field a link, and the shapes, filters, sorts and search text after it, reads of a record it
// gets (ctx.get) or reads back (ctx.referrers) is kept, so the projection changes no answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { indexBuilder } from '../../src/data/indexes.ts';
import { keptFields } from '../../src/data/load.ts';
import { generateRecords } from '../../src/generate/generate.ts';
import { RESOURCE_LIST, RESOURCES } from '../../src/resources/index.ts';
import type { Backref, CollectionName, LinkContext, SourceRecord } from '../../src/resources/types.ts';

test('keptFields holds every field that links and what follows them read of another collection', () => {
  const sources = generateRecords({ scale: 20 }) as Record<CollectionName, SourceRecord[]>;
  for (const def of RESOURCE_LIST) {
    const read = new Map<CollectionName, Set<string>>();
    const watched = (collection: CollectionName, r: SourceRecord): SourceRecord => {
      const seen = read.get(collection) ?? read.set(collection, new Set()).get(collection)!;
      return new Proxy(r, {
        get: (target, key, receiver) => (typeof key === 'string' && seen.add(key), Reflect.get(target, key, receiver)),
        ownKeys: (target) => (seen.add('(every field)'), Reflect.ownKeys(target)),
      });
    };
    const ctx: LinkContext = {
      get: (collection, slug) => {
        const r = sources[collection].find((x) => x.slug === slug);
        return r && watched(collection, r);
      },
      // Every record of `from` whose references name this record, with the object that holds the reference.
      referrers: (_collection, slug, from) => {
        const out: Backref[] = [];
        for (const r of sources[from]) {
          for (const holder of Object.values(r).flat()) {
            if (holder !== null && typeof holder === 'object' && Object.values(holder).includes(slug)) out.push({ record: watched(from, r), holder: holder as Record<string, unknown> });
          }
        }
        return out;
      },
    };
    const builder = indexBuilder(def);
    let backrefs = 0;
    for (const r of sources[def.name]) {
      const linked = def.link(r, ctx);
      backrefs += Array.isArray(linked.filmography) ? linked.filmography.length : 0;
      builder.add(linked);
    }
    builder.finish();
    if (def.referrers) assert.ok(backrefs > 0, `${def.name}: the fixture has back-references to read`);
    for (const [collection, fields] of read) {
      const kept = new Set(keptFields(RESOURCES[collection]));
      for (const f of fields) if (f !== 'toJSON') assert.ok(kept.has(f), `${def.name} reads ${collection}.${f}, which the load does not keep (readByLinks)`);
    }
  }
});
