// A collection that is not rebuilt (taken from the boot cache or the live snapshot) as the loader's
// link target, so an edit of one file reads and validates only the files of what it rebuilds (issue
// 19): references into it are checked against its slug table, and a record a link reads is decoded
// on demand from its served JSON (list item and detail-only text), never from its data file again.
import type { ResourceDefinition, SourceRecord } from '../resources/types.ts';
import type { KnownCollection } from './load.ts';
import { fragment, utcYmd, type Fragments, type Offsets, type RecordOffsets } from './fragments.ts';
import { detailPlan, ownFieldsJson } from './detail-layout.ts';
import { slugTableAt, type SlugTable } from './string-table.ts';
import { slugId, type CollectionIndex } from './indexes.ts';
import { scratchBuffer } from './scratch.ts';
import { StringKeys } from './string-keys.ts';

/**
 * The source fields a record decoded from served JSON holds: those served under their own name, as
 * they are (not derived, not late, not an embedded pick). A value the data lacks comes back as null
 * (or [] for an array), as the shapes serve it. test/data/known.test.ts checks that every link reads
 * only these fields of the records it gets.
 */
export function decodableFields(def: ResourceDefinition): string[] {
  const served = new Set<string>();
  for (const f of [...def.listFields, ...def.detailFields]) if (typeof f === 'string') served.add(f);
  return Object.keys(def.source.properties).filter((name) => served.has(name) && !Object.hasOwn(def.derived.properties, name) && name !== def.late?.field);
}

/**
 * `ix` as a link target: slugs from its table; a record is decoded from its list item when a link
 * first asks for it, and its detail-only fields (if any are source fields) only when one is read
 * (a getter on a prototype shared by the collection's records). Decoded records are kept until the
 * load lets go of this object, so a record many others refer to is parsed once.
 */
export function knownCollection(ix: CollectionIndex): KnownCollection {
  const names = decodableFields(ix.def);
  const listed = new Set(ix.def.listFields.filter((f): f is string => typeof f === 'string'));
  // Any day: the late field is not a source field, it only has to make the list item whole JSON.
  const today = utcYmd(Date.now());
  const det = ix.detail;
  /** The detail-only fields of record `id`, parsed. */
  const detailOf = (id: number): Record<string, unknown> => {
    if (det.plan === null) return (JSON.parse(fragment(det.own, id, today).toString('utf8')) as { data: Record<string, unknown> }).data;
    return JSON.parse(ownFieldsJson(det, id)) as Record<string, unknown>;
  };
  const ID = Symbol('id');
  const ITEM = Symbol('item');
  const DETAIL = Symbol('detail');
  type Decoded = Record<string | symbol, unknown>;
  // Every field but the slug decoded when first read: a link that embeds the record by id (outfits
  // and news their celebrity) reads only its slug, and parsing each list item cost 0.4 s of a
  // rebuild of outfits at 100k.
  const proto: object = {};
  for (const name of names) {
    if (name === 'slug') continue;
    Object.defineProperty(proto, name, {
      enumerable: true,
      get: listed.has(name)
        ? function (this: Decoded) {
            const item = (this[ITEM] ??= JSON.parse(fragment(ix.list, this[ID] as number, today).toString('utf8'))) as Record<string, unknown>;
            return item[name] ?? null;
          }
        : function (this: Decoded) {
            const d = (this[DETAIL] ??= detailOf(this[ID] as number)) as Record<string, unknown>;
            return d[name] ?? null;
          },
    });
  }
  const decoded: (SourceRecord | undefined)[] = [];
  return {
    has: (slug) => slugId(ix, slug) >= 0,
    get: (slug) => {
      const id = slugId(ix, slug);
      if (id < 0) return undefined;
      let r = decoded[id];
      if (r === undefined) {
        const out = Object.create(proto) as Decoded;
        out[ID] = id;
        // The slug it was found by is its own, byte for byte (the table compares the whole slug).
        if (names.includes('slug')) out.slug = slug;
        decoded[id] = r = out as SourceRecord;
      }
      return r;
    },
  };
}

/** A Fragments without its definition's late field (a function), its bytes a plain Uint8Array: what structured clone can carry. */
type Arena = Pick<Fragments, 'starts' | 'gaps' | 'keys'> & { readonly bytes: Uint8Array };

/**
 * What knownCollection and an embed of the collection read of an index (slugs, list items, detail-only
 * text), as typed arrays another thread can be sent (a copy: src/data/build-split.ts). The search,
 * sort and filter structures stay behind.
 */
export interface KnownParts {
  readonly size: number;
  readonly slugs: SlugTable;
  readonly list: Arena;
  readonly own: Arena;
  readonly cuts: RecordOffsets;
  readonly ownCuts: RecordOffsets;
  /** Whether the index was built with its embeds (the detail plan depends on it). */
  readonly embedded: boolean;
}

/**
 * A copy of `ix`'s KnownParts, each array with a buffer of its own, for the receiver to take over
 * (postMessage's transfer list: knownBuffers). Not a structured clone of the arrays themselves: an
 * arena's buffer is resizable, which Node 20 cannot clone, and a clone copies a view's whole buffer.
 */
export function knownParts(ix: CollectionIndex): KnownParts {
  // A Uint8Array of its own, not a Buffer: a small Buffer lies in the Buffer pool, which Node 26 refuses to transfer.
  const arena = (f: Fragments): Arena => ({ bytes: new Uint8Array(f.bytes), starts: f.starts.slice(), gaps: f.gaps && f.gaps.slice(), keys: f.keys && f.keys.slice() });
  const { at, slots, bits } = ix.slugs;
  const d = ix.detail;
  return { size: ix.size, slugs: { at: at.slice(), slots: slots.slice(), bits }, list: arena(ix.list), own: arena(d.own), cuts: d.cuts.slice(), ownCuts: d.ownCuts.slice(), embedded: ix.embeds.length > 0 };
}

/** The buffers of a knownParts copy, to transfer. */
export function knownBuffers(p: KnownParts): ArrayBuffer[] {
  const arrays = [p.slugs.at, p.slugs.slots, p.list.bytes, p.list.starts, p.list.gaps, p.list.keys, p.own.bytes, p.own.starts, p.own.gaps, p.own.keys, p.cuts, p.ownCuts];
  return [...new Set(arrays.flatMap((a) => (a ? [a.buffer as ArrayBuffer] : [])))];
}

/**
 * An index of `def` holding only its KnownParts, for knownCollection and for the embeds of a build
 * (slugId and size): nothing else of it may be read. `parts` as structured clone delivers them (a
 * Buffer arrives as a Uint8Array).
 */
export function fromKnownParts(def: ResourceDefinition, parts: KnownParts): CollectionIndex {
  const plan = detailPlan(def, parts.embedded);
  const lateIn = (fields: readonly unknown[]) => (def.late !== undefined && fields.includes(def.late.field) ? def.late : null);
  const arena = (a: Arena, late: Fragments['late']): Fragments => ({
    bytes: Buffer.from(a.bytes.buffer, a.bytes.byteOffset, a.bytes.byteLength),
    starts: a.starts as Offsets,
    gaps: a.gaps,
    keys: a.keys,
    late,
  });
  const list = arena(parts.list, lateIn(def.listFields));
  const own = arena(parts.own, plan === null ? lateIn(def.detailFields) : null);
  return { def, size: parts.size, slugs: parts.slugs, list, detail: { plan, own, cuts: parts.cuts, ownCuts: parts.ownCuts } } as unknown as CollectionIndex;
}

/**
 * A collection read but not yet indexed (celebrities, while the main thread reads movies), as the
 * link and embed target of a build on another thread: `records` as links keep them (their kept
 * fields, load.ts OnKept), in file order, so record i is the index's record i once it is built.
 * Links get exactly the records a load on one thread gives them. The index holds only a slug table
 * (over `"slug":"<slug>"` items), for slugId and size, all the build reads of an embedded
 * collection: nothing else of it may be read. The caller checks the built index's slugs against
 * these (keptSlugsMatch): a file edited between its reads makes the load start over.
 */
export function fromKeptRecords(def: ResourceDefinition, records: readonly SourceRecord[]): { index: CollectionIndex; known: KnownCollection } {
  const kept = new KeptRecords(def);
  kept.add(records);
  return kept.finish();
}

/** The key before each kept record's slug in the slug table's items. */
const SLUG_ITEM = '"slug":"';

/**
 * fromKeptRecords slice by slice, as the records arrive (while the main thread still reads their
 * file): at the last one, only the slug table is left to build (at 100k, the whole of it after the
 * last slice was about 0.2 s the build thread waited).
 */
export class KeptRecords {
  private readonly records: SourceRecord[] = [];
  private readonly slugs: string[] = [];
  /** Not a Map (string-keys.ts); the slugs are distinct (valid records), so a slug's id is its record's. */
  private readonly bySlug = new StringKeys();
  /** The items of each slice, `"slug":"<slug>"` back to back. */
  private readonly texts: string[] = [];
  private length = 0;

  constructor(private readonly def: ResourceDefinition) {}

  add(records: readonly SourceRecord[]): void {
    let text = '';
    for (const r of records) {
      this.records.push(r);
      this.slugs.push(r.slug);
      this.bySlug.add(r.slug);
      text += `${SLUG_ITEM}${r.slug}"`;
    }
    this.texts.push(text);
    this.length += text.length; // a slug is [a-z0-9-]: one byte per unit
  }

  finish(): { index: CollectionIndex; known: KnownCollection } {
    const { slugs, records, bySlug } = this;
    const starts = new Uint32Array(slugs.length + 1);
    for (let i = 0; i < slugs.length; i++) starts[i + 1] = starts[i]! + SLUG_ITEM.length + slugs[i]!.length + 1;
    // A scratch buffer: at 100k the 2.5 MB of a Buffer.from, freed with the thread, raised glibc's mmap threshold (scratch.ts).
    const bytes = scratchBuffer(this.length);
    let at = 0;
    for (const text of this.texts) at += bytes.write(text, at, 'latin1');
    this.texts.length = 0;
    // Each slug starts right after its key.
    const index = { def: this.def, size: slugs.length, slugs: slugTableAt(bytes, starts, new Uint16Array(slugs.length).fill(SLUG_ITEM.length)), list: { bytes, starts } } as unknown as CollectionIndex;
    return { index, known: { has: (slug) => bySlug.has(slug), get: (slug) => records[bySlug.find(slug)] } };
  }
}

/** Whether `ix` holds, record by record, the slugs `slugs` (those fromKeptRecords was given). */
export function keptSlugsMatch(ix: CollectionIndex, slugs: readonly string[]): boolean {
  if (ix.size !== slugs.length) return false;
  for (let i = 0; i < slugs.length; i++) if (slugId(ix, slugs[i]!) !== i) return false;
  return true;
}
