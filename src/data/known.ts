// A collection that is not rebuilt (taken from the boot cache or the live snapshot) as the loader's
// link target, so an edit of one file reads and validates only the files of what it rebuilds (issue
// 19): references into it are checked against its slug table, and a record a link reads is decoded
// on demand from its served JSON (list item and detail-only text), never from its data file again.
import type { ResourceDefinition, SourceRecord } from '../resources/types.ts';
import type { KnownCollection } from './load.ts';
import { fragment, utcYmd } from './fragments.ts';
import { ownFieldsJson } from './detail-layout.ts';
import { slugId, type CollectionIndex } from './indexes.ts';

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
  const DETAIL = Symbol('detail');
  type Decoded = Record<string | symbol, unknown>;
  const proto: object = {};
  for (const name of names) {
    if (listed.has(name)) continue;
    Object.defineProperty(proto, name, {
      enumerable: true,
      get(this: Decoded) {
        const d = (this[DETAIL] ??= detailOf(this[ID] as number)) as Record<string, unknown>;
        return d[name] ?? null;
      },
    });
  }
  const fromList = names.filter((name) => listed.has(name));
  const decoded: (SourceRecord | undefined)[] = [];
  return {
    has: (slug) => slugId(ix, slug) >= 0,
    get: (slug) => {
      const id = slugId(ix, slug);
      if (id < 0) return undefined;
      let r = decoded[id];
      if (r === undefined) {
        const item = JSON.parse(fragment(ix.list, id, today).toString('utf8')) as Record<string, unknown>;
        const out = Object.create(proto) as Decoded;
        out[ID] = id;
        for (const name of fromList) out[name] = item[name] ?? null;
        decoded[id] = r = out as SourceRecord;
      }
      return r;
    },
  };
}
