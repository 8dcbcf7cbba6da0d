// A collection taken from the boot cache as a link target (src/data/known.ts): links read only the
// fields a record decoded from its served JSON holds, a decoded record equals its source in those
// fields, and a load with `known` reads nothing of the collections it stands in for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildIndex, detailBody, indexBuilder, listItem, slugId, type CollectionIndex } from '../../src/data/indexes.ts';
import { decodableFields, fromKeptRecords, keptSlugsMatch, knownCollection } from '../../src/data/known.ts';
import { collecting, collectionsToRead, DataError, loadCollections, loadLinked } from '../../src/data/load.ts';
import { generateRecords } from '../../src/generate/generate.ts';
import { RESOURCE_LIST, RESOURCES } from '../../src/resources/index.ts';
import type { CollectionName, LinkContext, LinkedRecord, SourceRecord } from '../../src/resources/types.ts';
import { fixture } from '../helpers/fixture.ts';

test('every field a link (and the shapes, filters and sorts after it) reads of a record it gets is decodable from the served JSON', () => {
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
      referrers: () => [],
    };
    const builder = indexBuilder(def);
    for (const r of sources[def.name]) builder.add(def.link(r, ctx));
    builder.finish();
    for (const [collection, fields] of read) {
      const decodable = new Set(decodableFields(RESOURCES[collection]));
      for (const f of fields) if (f !== 'toJSON') assert.ok(decodable.has(f), `${def.name} reads ${collection}.${f}, which its served JSON does not hold as it is`);
    }
  }
});

test('a decoded record holds its source values (null for a value the data lacks), the detail-only ones too', async () => {
  const linked = await loadLinked(fixture());
  const source = fixture();
  for (const def of RESOURCE_LIST) {
    const known = knownCollection(buildIndex(def, linked[def.name]));
    for (const [i, r] of linked[def.name].entries()) {
      const got = known.get(r.slug)!;
      for (const f of decodableFields(def)) assert.deepEqual(withoutNulls(got[f]), withoutNulls(r[f]), `${def.name}[${i}].${f}`);
      assert.equal(known.get(r.slug), got, 'decoded once');
    }
    assert.equal(known.get('no-such-slug'), undefined);
    assert.ok(known.has(source[def.name][0]!.slug as string) && !known.has('no-such-slug'));
  }
});

test('kept records as a link and embed target (a build thread before the collection is indexed): slug ids in record order, the records themselves; a built index checked against their slugs', async () => {
  const linked = await loadLinked(fixture());
  const def = RESOURCES.celebrities;
  const records = linked.celebrities.map((r) => ({ slug: r.slug, name: r.name }) as unknown as SourceRecord);
  const { index, known } = fromKeptRecords(def, records);
  assert.equal(index.size, records.length);
  records.forEach((r, i) => {
    assert.equal(slugId(index, r.slug), i);
    assert.equal(known.get(r.slug), r);
    assert.ok(known.has(r.slug));
  });
  assert.equal(slugId(index, 'no-such-slug'), -1);
  assert.ok(!known.has('no-such-slug') && known.get('no-such-slug') === undefined);
  const built = buildIndex(def, linked.celebrities);
  const slugs = records.map((r) => r.slug);
  assert.ok(keptSlugsMatch(built, slugs));
  assert.ok(!keptSlugsMatch(built, [slugs[1]!, slugs[0]!, ...slugs.slice(2)]), 'two records swapped');
  assert.ok(!keptSlugsMatch(built, slugs.slice(1)), 'one record fewer');
  assert.ok(!keptSlugsMatch(built, [...slugs.slice(0, -1), 'no-such-slug']), 'another slug');
});

/** A value as the shapes serve it, less what they fill in: null members, and [] or null for a value the data lacks. */
function withoutNulls(v: unknown): unknown {
  if (v === null || v === undefined || (Array.isArray(v) && v.length === 0)) return undefined;
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (typeof v === 'object') return Object.fromEntries(Object.entries(v).flatMap(([k, x]) => (withoutNulls(x) === undefined ? [] : [[k, withoutNulls(x)]])));
  return v;
}

const TODAY = 20260115;
const indexed = collecting((def, records: LinkedRecord[]) => buildIndex(def, records));
/** Every list item and detail body of an index, as served on TODAY. */
const served = (ix: CollectionIndex) => Array.from({ length: ix.size }, (_, id) => [listItem(ix, id, TODAY).toString(), detailBody(ix, id, TODAY).toString()]);

test('collectionsToRead: what is rebuilt, what it reads back (referrers), and targets nobody stands in for', () => {
  const all = Object.fromEntries(RESOURCE_LIST.map((d) => [d.name, { has: () => true, get: () => undefined }]));
  const { outfits: _o, ...notOutfits } = all;
  assert.deepEqual([...collectionsToRead(new Set(['outfits']), notOutfits)], ['outfits']);
  assert.deepEqual([...collectionsToRead(new Set(['outfits']), {})].sort(), ['celebrities', 'movies', 'outfits']);
  assert.deepEqual([...collectionsToRead(new Set(['celebrities']), all)].sort(), ['celebrities', 'movies']);
  assert.equal(collectionsToRead(null, all).size, RESOURCE_LIST.length);
});

test('with known collections, only the rebuilt ones are read: links and reference checks go to the known ones', async () => {
  const full = fixture();
  const linked = await loadLinked(full);
  const known = { celebrities: knownCollection(buildIndex(RESOURCES.celebrities, linked.celebrities)), movies: knownCollection(buildIndex(RESOURCES.movies, linked.movies)) };
  // Only outfits and reviews are given: the others would be 'collection missing' if they were read.
  const input = { outfits: full.outfits, reviews: full.reviews };
  const out = await loadCollections(input, indexed, { only: new Set(['outfits', 'reviews'] as const), known });
  assert.deepEqual(Object.keys(out).sort(), ['outfits', 'reviews']);
  assert.deepEqual(served(out.outfits), served(buildIndex(RESOURCES.outfits, linked.outfits)));
  assert.deepEqual(served(out.reviews), served(buildIndex(RESOURCES.reviews, linked.reviews)));

  const bad = { outfits: [{ ...full.outfits[0]!, celebrity: 'no-one' }] };
  await assert.rejects(loadCollections(bad, indexed, { only: new Set(['outfits'] as const), known }), (err: DataError) => {
    assert.match(err.message, /outfits\.json, record 0, celebrity: no celebrities record with slug "no-one"/);
    assert.equal(err.problems.length, 1);
    return true;
  });
});
