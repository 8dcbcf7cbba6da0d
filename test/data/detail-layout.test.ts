// src/data/detail-layout.ts: a detail assembled from its list item's runs and its detail-only text is
// byte for byte the body the detail shape gives, and a list item joined from runs serialized apart
// is the list shape, on any serving day, with strings that hold commas, braces, quotes and escapes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { detailPlan, embedFields } from '../../src/data/detail-layout.ts';
import { buildIndex, detailBody, linkEmbeds, listBody, listItem, type CollectionIndex } from '../../src/data/indexes.ts';
import { compileShapes } from '../../src/data/shape.ts';
import { loadLinked } from '../../src/data/load.ts';
import { generateRecords } from '../../src/generate/generate.ts';
import { RESOURCE_LIST, RESOURCES } from '../../src/resources/index.ts';
import type { CollectionName } from '../../src/resources/types.ts';

test('every collection: a detail made of list runs and detail-only text == the whole detail shape, on two days', async () => {
  const sources = generateRecords({ scale: 40 }) as Record<string, Record<string, unknown>[]>;
  // Free text fields of the first records hold what a scan of the text would trip on.
  for (const def of RESOURCE_LIST) {
    for (const r of sources[def.name]!.slice(0, 3)) {
      for (const [name, schema] of Object.entries(def.source.properties)) {
        if (schema.type === 'string' && !schema.format && !schema.ref && !schema.enum && typeof r[name] === 'string') r[name] += ' "a, {b}" [c] \\ é 😀';
      }
    }
  }
  // A record whose embedded celebrity lacks a field (served as null).
  const celebrity = sources.celebrities![0]!;
  delete celebrity.nationality;
  const linked = await loadLinked(sources);
  // Embedded objects kept as text (no other index at hand) and as ids of the records of the
  // collections embedded from (built first, as a load does), each against the shapes.
  const built: Partial<Record<CollectionName, CollectionIndex>> = {};
  // Movies first: a celebrity's filmography reads them.
  const order = [RESOURCES.movies, ...RESOURCE_LIST.filter((d) => d.name !== 'movies')];
  const indexes = order.flatMap((def) => [
    { def, ix: buildIndex(def, linked[def.name]) },
    { def, ix: (built[def.name] = buildIndex(def, linked[def.name], (name) => built[name])) },
  ]);
  const linkedUp = linkEmbeds(built);
  for (const [k, { def, ix: unlinked }] of indexes.entries()) {
    assert.ok(detailPlan(def), `${def.name}: a plan (its late field, if shown, lies in a list run)`);
    const ix = k % 2 === 0 ? unlinked : linkedUp[def.name]!;
    assert.equal(ix.embeds.length, k % 2 === 0 ? 0 : embedFields(def).length);
    const records = linked[def.name];
    const shapes = compileShapes(def);
    const items: string[] = [];
    for (const today of [20260115, 20360601]) {
      records.forEach((r, id) => {
        const [head, tail] = shapes(r).detail;
        const late = tail === null ? '' : String(def.late!.value(def.late!.key(r) ?? NaN, today) ?? 'null');
        const lateText = tail === null ? '' : def.late!.key(r) === null ? 'null' : late;
        const want = `{"success":true,"version":"v1","resource":"${def.name}","data":${head}${lateText}${tail ?? ''}}`;
        assert.equal(detailBody(ix, id, today).toString(), want, `${def.name} ${id} on ${today}`);
        // The list item, joined from runs serialized apart, == the whole list shape.
        const [listHead, listTail] = shapes(r).list;
        assert.equal(listItem(ix, id, today).toString(), `${listHead}${listTail === null ? '' : lateText}${listTail ?? ''}`, `${def.name} ${id} list on ${today}`);
        items.push(listItem(ix, id, today).toString());
      });
      // A page: the items of any ids in any order, joined by commas between a head and `]}`.
      const ids = Int32Array.from(records.keys()).reverse();
      const head = Buffer.from('{"head":[');
      assert.equal(listBody(ix, ids, today, head, head.length).toString(), `{"head":[${[...items].reverse().join(',')}]}`, `${def.name} page on ${today}`);
      items.length = 0;
    }
  }
});

test("embeds: an outfit's and a news article's celebrity -> kept as its record id, not as text", () => {
  assert.deepEqual(embedFields(RESOURCES.outfits), [{ field: 'celebrity', target: 'celebrities', refs: false }]);
  assert.deepEqual(embedFields(RESOURCES.news), [{ field: 'celebrity', target: 'celebrities', refs: false }]);
  assert.deepEqual(embedFields(RESOURCES.celebrities), [{ field: 'filmography', target: 'movies', refs: true }]);
  for (const def of [RESOURCES.movies, RESOURCES.reviews]) assert.deepEqual(embedFields(def), [], def.name);
  // {name, slug, nationality}: celebrity list fields 1-2 and 5, two pieces.
  const run = detailPlan(RESOURCES.outfits, true)!.runs.find((r) => r.kind === 'embed');
  assert.ok(run && run.kind === 'embed');
  assert.deepEqual(run.pieces, [[1, 3], [5, 6]]);
  assert.equal(detailPlan(RESOURCES.outfits, false)!.runs.some((r) => r.kind === 'embed'), false);
});

test('embeds: the detail-only arena of an outfit and a news article holds no celebrity text, only its id', async () => {
  const linked = await loadLinked(generateRecords({ scale: 10 }));
  const celebrities = buildIndex(RESOURCES.celebrities, linked.celebrities);
  for (const name of ['outfits', 'news'] as const) {
    const ix = buildIndex(RESOURCES[name], linked[name], () => celebrities);
    assert.equal(ix.detail.own.bytes.includes('"nationality"'), false, `${name}: detail-only arena`);
    assert.equal(buildIndex(RESOURCES[name], linked[name]).detail.own.bytes.includes('"nationality"'), true, `${name}: as text without the celebrities' index`);
    assert.deepEqual([...ix.embeds[0]!.ids.subarray(0, 3)], linked[name].slice(0, 3).map((r) => linked.celebrities.findIndex((c) => c.slug === (r.celebrity as { slug: string }).slug)));
  }
});

test("refs: a celebrity's filmography keeps each film's title, slug and release date as the movie's id and a hole", async () => {
  const linked = await loadLinked(generateRecords({ scale: 10 }));
  // An item whose leading fields are not its movie's text (a link that changed one) keeps them.
  const changed = linked.celebrities.find((c) => (c.filmography as unknown[]).length > 0)!;
  const item = (changed.filmography as Record<string, unknown>[])[0]!;
  const title = item.title as string;
  item.title = (title[0] === 'Q' ? 'X' : 'Q') + title.slice(1); // the same length: only the bytes differ
  const movies = buildIndex(RESOURCES.movies, linked.movies);
  const ix = linkEmbeds({ movies, celebrities: buildIndex(RESOURCES.celebrities, linked.celebrities, () => movies) }).celebrities;
  const run = ix.detail.plan!.runs.find((r) => r.kind === 'refs');
  assert.ok(run && run.kind === 'refs');
  assert.deepEqual(run.piece, [1, 4]);
  const e = ix.embeds[0]!;
  const films = linked.celebrities.reduce((n, c) => n + (c.filmography as unknown[]).length, 0);
  assert.ok(films > 1 && e.starts![ix.size] === films - 1, `every film a hole but the changed one: ${e.starts![ix.size]} of ${films}`);
  assert.equal(ix.detail.own.bytes.toString().match(/"releaseDate"/g)?.length, 1);
  assert.ok(ix.detail.own.bytes.includes('"character"'));
  const shapes = compileShapes(RESOURCES.celebrities);
  linked.celebrities.forEach((c, id) => {
    const [head, tail] = shapes(c).detail;
    const key = RESOURCES.celebrities.late!.key(c);
    assert.equal(detailBody(ix, id, 20260115).toString(), `{"success":true,"version":"v1","resource":"celebrities","data":${head}${key === null ? 'null' : RESOURCES.celebrities.late!.value(key, 20260115)}${tail}}`);
  });
});

test('the first key of each run of detail-only fields is kept once per collection, not per record', async () => {
  const linked = await loadLinked(generateRecords({ scale: 10 }));
  const outfits = buildIndex(RESOURCES.outfits, linked.outfits, () => buildIndex(RESOURCES.celebrities, linked.celebrities));
  assert.equal(outfits.detail.own.bytes.includes('"description"'), false);
  const first = outfits.detail.own.bytes.toString('utf8', outfits.detail.own.starts[0], outfits.detail.own.starts[1]);
  assert.equal(first, JSON.stringify(linked.outfits[0]!.description ?? null), 'the value alone');
  const reviews = buildIndex(RESOURCES.reviews, linked.reviews);
  // Two runs of detail-only fields ({author}, then content to cons): neither first key is in the arena.
  assert.deepEqual(reviews.detail.plan!.runs.flatMap((r) => (r.kind === 'own' ? [r.key.toString()] : [])), [',"author":', ',"content":']);
  assert.equal(reviews.detail.own.bytes.includes('"content"') || reviews.detail.own.bytes.includes('"author"'), false);
  assert.ok(reviews.detail.own.bytes.includes('"movieDetails"'), 'the keys after the first stay');
});

test('embeds: a record that embeds none (id -1) -> its field served as null, as the shape serves it', async () => {
  const linked = await loadLinked(generateRecords({ scale: 10 }));
  const celebrities = buildIndex(RESOURCES.celebrities, linked.celebrities);
  const outfits = buildIndex(RESOURCES.outfits, linked.outfits, () => celebrities);
  const ids = outfits.embeds[0]!.ids.slice();
  ids[1] = -1;
  const ix = linkEmbeds({ celebrities, outfits: { ...outfits, embeds: [{ ...outfits.embeds[0]!, ids, index: null }] } }).outfits;
  const shapes = compileShapes(RESOURCES.outfits)({ ...linked.outfits[1]!, celebrity: null });
  assert.equal(detailBody(ix, 1, 20260115).toString(), `{"success":true,"version":"v1","resource":"outfits","data":${shapes.detail[0]}}`);
  assert.match(detailBody(ix, 0, 20260115).toString(), /"celebrity":\{"name":/);
  // Its list item too (the list arena's embed reads the index's ids: linkEmbeds).
  assert.equal(listItem(ix, 1, 20260115).toString(), shapes.list[0]);
  assert.equal(listBody(ix, Int32Array.of(1, 0), 20260115, Buffer.from('['), 1).toString(), `[${shapes.list[0]},${listItem(ix, 0, 20260115).toString()}]}`);
});

test("outfits' and news' list items keep their celebrity as its id: not in their arenas, read from the celebrity's list item as it is (a rename shows at once)", async () => {
  const linked = await loadLinked(generateRecords({ scale: 20 }));
  const celebrities = buildIndex(RESOURCES.celebrities, linked.celebrities);
  for (const name of ['outfits', 'news'] as const) {
    const text = buildIndex(RESOURCES[name], linked[name]);
    const built = buildIndex(RESOURCES[name], linked[name], () => celebrities);
    assert.ok(built.list.embed, `${name}: a list embed`);
    // Per record, at least `,"celebrity":{}` fewer bytes, and no celebrity's name in the arena.
    assert.ok(built.list.bytes.length <= text.list.bytes.length - built.size * ',"celebrity":{}'.length, name);
    assert.equal(built.list.bytes.includes('"celebrity"'), false, name);
    const ids = Int32Array.from(built.list.embed.ids.keys()).reverse();
    const page = (ix: CollectionIndex) => listBody(ix, ids, 20260115, Buffer.from('['), 1).toString();
    assert.equal(page(built), page(text), name);
    // A celebrity renamed: the same arena shows the new name once linked to the new index.
    const c = built.list.embed.ids[0]!;
    const renamed = linked.celebrities.map((r, i) => (i === c ? { ...r, name: 'Renamed "Once"' } : r));
    const after = buildIndex(RESOURCES.celebrities, renamed);
    const ix = linkEmbeds({ celebrities: after, [name]: built } as Partial<Record<CollectionName, CollectionIndex>>)[name]!;
    assert.equal(ix.list.bytes, built.list.bytes, 'the arena is kept');
    const want = buildIndex(RESOURCES[name], linked[name].map((r) => ((r.celebrity as { slug: string }).slug === renamed[c]!.slug ? { ...r, celebrity: renamed[c] } : r)));
    assert.equal(page(ix), page(want), `${name}: renamed`);
    assert.match(listItem(ix, 0, 20260115).toString(), /"celebrity":\{"name":"Renamed \\"Once\\"","slug":/);
  }
});
