// A detail body stored without the bytes it shares with the record's list item (STYLE habit 2, issue
// 19): the detail's fields are runs, either a range of the list item's fields (the same name, the
// same shape, the same place at the start or not) or detail-only fields. Only the detail-only text
// is kept, in an arena of its own; a run of list fields is copied from the list arena at send time,
// found through the byte offsets of the field boundaries it starts and ends at (a few per record).
// An object embedded from another collection (an outfit's celebrity) is kept as that record's id:
// its fields are copied from the other collection's list item at send time, as runs of it; and so
// are the leading fields of the items of an array made from another collection's records (each
// film of a celebrity's filmography: its title, slug and release date).
// The response envelope is the same for every record of a collection, so it is kept once.
import { RESOURCES } from '../resources/index.ts';
import type { CollectionName, EmbeddedField, OutputField, ResourceDefinition } from '../resources/types.ts';
import { fragment, lateValue, numberLength, writeNumber, type EmbedSource, type Fragments, type RecordOffsets } from './fragments.ts';
import type { CollectionIndex } from './indexes.ts';
import { sendBuffer } from './send-buffer.ts';

/** List field boundaries [from, to) of another collection's list item. */
export type Piece = readonly [from: number, to: number];

export type Run =
  /** List fields [from, to) of the record's own list item. */
  | { readonly kind: 'list'; readonly from: number; readonly to: number }
  /**
   * Detail fields [from, to), kept as text in the detail-only arena without the first one's key
   * (`key`: `,"description":`, the same for every record, kept here once).
   */
  | { readonly kind: 'own'; readonly from: number; readonly to: number; readonly key: Buffer }
  /**
   * Detail field `field`, an object embedded from another collection: `head` (`,"name":`), then `{`,
   * the pieces of the embedded record's list item (the first without its leading comma) and `}`;
   * `null` when the record embeds none. `slot`: its number among the index's embeds.
   */
  | { readonly kind: 'embed'; readonly field: number; readonly slot: number; readonly head: Buffer; readonly pieces: readonly Piece[] }
  /**
   * Detail field `field`, an array whose items start with list fields of records of another
   * collection (refsPiece): the detail-only arena holds its text (after `key`) with each such
   * item's `piece` left out, a hole that the embed `slot` says the place of (Embed.at) and fills
   * from that record's list item. An item whose piece is not that text keeps it (no hole).
   */
  | { readonly kind: 'refs'; readonly field: number; readonly slot: number; readonly key: Buffer; readonly piece: Piece };

/** How a collection's detail is assembled; the same for every record, made from the definition. */
export interface DetailPlan {
  /** List-field runs (list field indices [from, to)), own runs (detail field indices [from, to)) and embeds. */
  readonly runs: readonly Run[];
  /** The list field boundaries runs (its own, or embeds of it by others) start or end at, besides the first field and the end, ascending. */
  readonly listCuts: readonly number[];
  /** List field boundary -> its number among `listCuts` (-1 for 0 and the end). */
  readonly cutOf: Int32Array;
  /** The detail field boundaries own runs start or end at, ascending (for cutting the detail text). */
  readonly detailCuts: readonly number[];
  /** Own and refs runs of a record: the detail-only arena holds their text back to back. */
  readonly ownRuns: number;
  readonly listFields: number;
  readonly detailFields: number;
  /** `{"success":true,"version":"v1","resource":"<name>","data":{` and `}}`. */
  readonly head: Buffer;
  readonly tail: Buffer;
}

/**
 * The records of another collection that a collection's records embed through field `field`: the
 * id of each one's record there (-1: none, served as null), and that collection's index, through
 * which its list items are read (null until every collection of the snapshot is there: linkEmbeds).
 */
export interface Embed {
  readonly field: string;
  readonly target: CollectionName;
  readonly ids: Int32Array;
  readonly index: CollectionIndex | null;
  /** A refs run's: record i's holes are entries [starts[i], starts[i + 1]) of `ids` and `at`; null for an embedded object (one id per record). */
  readonly starts: Uint32Array | null;
  /** A refs run's: per hole, its offset from the start of its record's detail-only text. */
  readonly at: RecordOffsets | null;
}

/**
 * A collection's details: with a plan, the detail-only text of each record (`own`), each record's
 * list cuts (`listCuts` per record, byte offsets from its list item's start) and the cuts between its
 * own runs (`ownRuns - 1` per record, from its own text's start). Without a plan (a late field that
 * only the detail shows), `own` holds the whole bodies as they are sent.
 */
export interface Details {
  readonly plan: DetailPlan | null;
  readonly own: Fragments;
  readonly cuts: RecordOffsets;
  readonly ownCuts: RecordOffsets;
}

const slot = (f: OutputField): string => (typeof f === 'string' ? f : `${f.name}:${f.pick.join(',')}`);
const fieldName = (f: OutputField): string => (typeof f === 'string' ? f : f.name);

/** True when the detail shows the late field. */
function lateInDetail(def: ResourceDefinition): boolean {
  const late = def.late?.field;
  return late !== undefined && def.detailFields.some((f) => fieldName(f) === late);
}

/**
 * The pieces of `target`'s list item an embedded field is copied from: each pick a plain list field
 * of the target (the same name, so the same text: shape.ts writes both from the target's schema), in
 * ascending order, none of them its late field, and the target's own details planned. Null when not
 * so: the embedded object is then kept as text, as any detail-only field.
 */
export function embedPieces(field: EmbeddedField): Piece[] | null {
  if (field.from === undefined) return null;
  const target = RESOURCES[field.from];
  if (!ownPlanned(target)) return null;
  // Source fields only: a derived one may be made from a third file, which an edit would change
  // without rebuilding the embedding collection (DEPENDS lists the files links read directly).
  if (field.pick.some((p) => Object.hasOwn(target.derived.properties, p))) return null;
  const at = field.pick.map((p) => target.listFields.indexOf(p));
  if (at.some((i, k) => i < 0 || (k > 0 && i <= at[k - 1]!) || target.listFields[i] === target.late?.field)) return null;
  const pieces: [number, number][] = [];
  for (const i of at) {
    const last = pieces.at(-1);
    if (last && last[1] === i) last[1]++;
    else pieces.push([i, i + 1]);
  }
  return pieces;
}

/**
 * The leading fields of the items of array field `name` (derived) that are list fields of the one
 * collection whose records `def`'s link reads back (`referrers`): a celebrity's filmography items
 * start with a movie's title, slug and release date, movie list fields 1-3. They must follow each
 * other there, be source fields (not derived, not late) and hold `slug` (which finds the record).
 */
export function refsPiece(def: ResourceDefinition, name: string): { readonly target: CollectionName; readonly piece: Piece; readonly lead: number } | null {
  const schema = def.derived.properties[name];
  if (schema?.type !== 'array' || schema.items.type !== 'object' || def.referrers?.length !== 1) return null;
  const target = RESOURCES[def.referrers[0]!];
  if (!ownPlanned(target)) return null;
  const props = Object.keys(schema.items.properties);
  const first = target.listFields.indexOf(props[0]!);
  if (first < 0) return null;
  let k = 0;
  while (k < props.length && target.listFields[first + k] === props[k] && !Object.hasOwn(target.derived.properties, props[k]!) && props[k] !== target.late?.field) k++;
  if (k === 0 || !props.slice(0, k).includes('slug')) return null;
  return { target: target.name, piece: [first, first + k], lead: k };
}

/** The fields of `def`'s shapes made from other collections' text (embedded objects, refs arrays), by name, in shape order. */
export function embedFields(def: ResourceDefinition): { readonly field: string; readonly target: CollectionName; readonly refs: boolean }[] {
  const out: { field: string; target: CollectionName; refs: boolean }[] = [];
  for (const f of [...def.listFields, ...def.detailFields]) {
    if (typeof f === 'string') {
      const r = refsPiece(def, f);
      if (r !== null && def.detailFields.includes(f) && !out.some((e) => e.field === f)) out.push({ field: f, target: r.target, refs: true });
      continue;
    }
    if (embedPieces(f) === null || out.some((e) => e.field === f.name)) continue;
    out.push({ field: f.name, target: f.from!, refs: false });
  }
  return out;
}

/**
 * The list field of `def` kept as the embedded record's id (fragments.ts ListEmbed), when its index
 * has its embeds: the first embedded field of the list item whose picks are one run of the other
 * collection's list fields, neither its first nor its last (so between two of its cuts), in a list
 * item without a late field (one gap per item) and not first (its text starts with a comma). `slot`:
 * its number among embedFields. Null when there is none.
 */
export function listEmbedPlan(def: ResourceDefinition): { readonly field: number; readonly slot: number; readonly head: Buffer; readonly piece: Piece } | null {
  if (def.late !== undefined && def.listFields.some((f) => fieldName(f) === def.late!.field)) return null;
  for (let j = 1; j < def.listFields.length; j++) {
    const f = def.listFields[j]!;
    if (typeof f === 'string' || f.from === undefined) continue;
    const pieces = embedPieces(f);
    if (pieces === null || pieces.length !== 1) return null;
    const piece = pieces[0]!;
    if (piece[0] === 0 || piece[1] >= RESOURCES[f.from].listFields.length) return null;
    const slot = embedFields(def).findIndex((e) => e.field === f.name && !e.refs);
    if (slot < 0) return null;
    return { field: j, slot, head: Buffer.from(`,${JSON.stringify(f.name)}:`, 'latin1'), piece };
  }
  return null;
}

/** Where `t`'s records' text for an embed of `piece` is read (fragments.ts EmbedSource), or null when `t` has no such cuts (a stand-in of slugs alone). */
export function embedSource(t: CollectionIndex, piece: Piece): EmbedSource | null {
  const plan = t.detail?.plan;
  if (plan == null) return null;
  const from = plan.cutOf[piece[0]]!;
  const to = plan.cutOf[piece[1]]!;
  if (from < 0 || to < 0) return null;
  return { bytes: t.list.bytes, starts: t.list.starts, cuts: t.detail.cuts, stride: plan.listCuts.length, from, to };
}

/** The boundaries of `def`'s list items that others' embeds copy from. */
function embeddedCuts(def: ResourceDefinition): number[] {
  const cuts: number[] = [];
  for (const other of Object.values(RESOURCES)) {
    const listed = listEmbedPlan(other);
    if (listed !== null && (other.listFields[listed.field] as EmbeddedField).from === def.name) cuts.push(...listed.piece);
    for (const f of other.detailFields) {
      if (typeof f === 'string') {
        const r = refsPiece(other, f);
        if (r !== null && r.target === def.name) cuts.push(...r.piece);
        continue;
      }
      if (f.from !== def.name) continue;
      for (const [a, b] of embedPieces(f) ?? []) cuts.push(a, b);
    }
  }
  return cuts;
}

/** True when a detail of `def` can be assembled from its list item's runs (its late field, if shown, lies in a list run). */
function ownPlanned(def: ResourceDefinition): boolean {
  return detailRuns(def, false) !== null;
}

/** The runs of `def`'s detail, or null when its late field is shown but lies in no list run. */
function detailRuns(def: ResourceDefinition, embedded: boolean): Run[] | null {
  const list = def.listFields.map(slot);
  const embeds = embedded ? embedFields(def) : [];
  // The list item's embedded record kept as its id: not text a detail's run can copy.
  const byId = embedded ? (listEmbedPlan(def)?.field ?? -1) : -1;
  const out: Run[] = [];
  def.detailFields.forEach((f, j) => {
    const li = list.indexOf(slot(f));
    // A field's text starts with a comma unless it is first: shared only when both agree on that.
    const shared = li >= 0 && li !== byId && (li === 0) === (j === 0);
    const last = out.at(-1) as { kind: string; from: number; to: number } | undefined;
    const e = shared ? -1 : embeds.findIndex((x) => x.field === fieldName(f));
    if (e >= 0 && embeds[e]!.refs) {
      const key = Buffer.from(`${j > 0 ? ',' : ''}${JSON.stringify(fieldName(f))}:`, 'latin1');
      out.push({ kind: 'refs', field: j, slot: e, key, piece: refsPiece(def, fieldName(f))!.piece });
    } else if (e >= 0 && typeof f !== 'string') {
      const head = Buffer.from(`${j > 0 ? ',' : ''}${JSON.stringify(fieldName(f))}:`, 'latin1');
      out.push({ kind: 'embed', field: j, slot: e, head, pieces: embedPieces(f as EmbeddedField)! });
    } else if (shared && last?.kind === 'list' && last.to === li) last.to++;
    else if (shared) out.push({ kind: 'list', from: li, to: li + 1 });
    else if (last?.kind === 'own' && last.to === j) last.to++;
    else out.push({ kind: 'own', from: j, to: j + 1, key: Buffer.from(`${j > 0 ? ',' : ''}${JSON.stringify(fieldName(f))}:`, 'latin1') });
  });
  if (lateInDetail(def)) {
    const li = def.listFields.findIndex((f) => fieldName(f) === def.late!.field);
    if (!out.some((r) => r.kind === 'list' && r.from <= li && li < r.to)) return null;
  }
  return out;
}

/**
 * The plan of a definition, or null when its late field is shown in the detail but not in a list run.
 * `embedded`: the objects it embeds from other collections are kept as record ids (Embed), not as
 * text (the index has the embeds: a load with every collection, or the boot cache of one).
 */
export function detailPlan(def: ResourceDefinition, embedded = false): DetailPlan | null {
  const runs = detailRuns(def, embedded);
  if (runs === null) return null;
  const m = def.listFields.length;
  const d = def.detailFields.length;
  const listCuts = new Set<number>();
  const detailCuts = new Set<number>();
  for (const b of embeddedCuts(def)) if (b > 0 && b < m) listCuts.add(b);
  // The list item's field kept as its embedded record's id is a run of its own, written as a gap.
  const byId = embedded ? listEmbedPlan(def) : null;
  if (byId !== null) for (const b of [byId.field, byId.field + 1]) if (b < m) listCuts.add(b);
  for (const r of runs) {
    if (r.kind === 'list') {
      for (const b of [r.from, r.to]) if (b > 0 && b < m) listCuts.add(b);
    } else if (r.kind === 'own') {
      for (const b of [r.from, r.to]) if (b > 0 && b < d) detailCuts.add(b);
    }
  }
  const cuts = [...listCuts].sort((a, b) => a - b);
  const cutOf = new Int32Array(m + 1).fill(-1);
  cuts.forEach((b, k) => (cutOf[b] = k));
  return {
    runs,
    listCuts: cuts,
    cutOf,
    detailCuts: [...detailCuts].sort((a, b) => a - b),
    ownRuns: runs.filter((r) => r.kind === 'own' || r.kind === 'refs').length,
    listFields: m,
    detailFields: d,
    head: Buffer.from(`{"success":true,"version":"v1","resource":"${def.name}","data":{`),
    tail: Buffer.from('}}'),
  };
}

/** Byte offset in the list arena of list field boundary `b` of record `id`. */
function listAt(list: Fragments, det: Details, plan: DetailPlan, id: number, b: number): number {
  if (b === 0) return list.starts[id]! + 1;
  if (b === plan.listFields) return list.starts[id + 1]! - 1;
  return list.starts[id]! + det.cuts[id * plan.listCuts.length + plan.cutOf[b]!]!;
}

/** Bytes of an embedded object as served: `head`, then its pieces in braces, or null. */
function embedLength(head: Buffer, pieces: readonly Piece[], e: Embed, id: number): number {
  const target = e.ids[id]!;
  if (target < 0) return head.length + 4;
  const t = e.index!;
  const plan = t.detail.plan!;
  let length = head.length + 2;
  for (let k = 0; k < pieces.length; k++) {
    const piece = pieces[k]!;
    length += listAt(t.list, t.detail, plan, target, piece[1]) - listAt(t.list, t.detail, plan, target, piece[0]);
  }
  // The first piece without its leading comma (none when it starts the item).
  return pieces[0]![0] > 0 ? length - 1 : length;
}

/** Writes an embedded object at `pos` (embedLength bytes); returns the position after it. */
function writeEmbed(head: Buffer, pieces: readonly Piece[], e: Embed, id: number, out: Buffer, pos: number): number {
  for (let i = 0; i < head.length; i++) out[pos++] = head[i]!;
  const target = e.ids[id]!;
  if (target < 0) return pos + out.write('null', pos, 'latin1');
  const t = e.index!;
  const plan = t.detail.plan!;
  out[pos++] = 0x7b; // {
  for (let k = 0; k < pieces.length; k++) {
    const piece = pieces[k]!;
    const a = listAt(t.list, t.detail, plan, target, piece[0]) + (k === 0 && piece[0] > 0 ? 1 : 0);
    pos += t.list.bytes.copy(out, pos, a, listAt(t.list, t.detail, plan, target, piece[1]));
  }
  out[pos++] = 0x7d; // }
  return pos;
}

/** Bytes the holes of record `id`'s refs run take: each record's piece, without its leading comma. */
function refsLength(piece: Piece, e: Embed, id: number): number {
  const t = e.index!;
  const plan = t.detail.plan!;
  const skip = piece[0] > 0 ? 1 : 0;
  let length = 0;
  for (let h = e.starts![id]!; h < e.starts![id + 1]!; h++) {
    const target = e.ids[h]!;
    length += listAt(t.list, t.detail, plan, target, piece[1]) - listAt(t.list, t.detail, plan, target, piece[0]) - skip;
  }
  return length;
}

/** Writes detail-only text [a, b) of record `id` with each hole's piece written in; returns the position after it. */
function writeRefs(own: Fragments, piece: Piece, e: Embed, id: number, a: number, b: number, out: Buffer, pos: number): number {
  const t = e.index!;
  const plan = t.detail.plan!;
  const skip = piece[0] > 0 ? 1 : 0;
  const start = own.starts[id]!;
  for (let h = e.starts![id]!; h < e.starts![id + 1]!; h++) {
    const hole = start + e.at![h]!;
    pos += own.bytes.copy(out, pos, a, hole);
    const target = e.ids[h]!;
    pos += t.list.bytes.copy(out, pos, listAt(t.list, t.detail, plan, target, piece[0]) + skip, listAt(t.list, t.detail, plan, target, piece[1]));
    a = hole;
  }
  return pos + own.bytes.copy(out, pos, a, b);
}

/** Where `piece` of record `target`'s list item lies in the list arena, without its leading comma: [from, to). */
export function pieceBounds(t: CollectionIndex, piece: Piece, target: number): [number, number] {
  const plan = t.detail.plan!;
  return [listAt(t.list, t.detail, plan, target, piece[0]) + (piece[0] > 0 ? 1 : 0), listAt(t.list, t.detail, plan, target, piece[1])];
}

/** Copies `bytes[a, b)` of a list arena, the late value's digits written in at `gap` when it lies there. */
function copyRange(list: Fragments, a: number, b: number, gap: number, late: number, out: Buffer, pos: number): number {
  if (!(gap > a && gap <= b)) return pos + list.bytes.copy(out, pos, a, b);
  pos += list.bytes.copy(out, pos, a, gap);
  pos = writeNumber(late, out, pos);
  return pos + list.bytes.copy(out, pos, gap, b);
}

/** Byte offset in the own arena of the start of own run `k` (k = ownRuns: the end) of record `id`. */
function ownAt(det: Details, plan: DetailPlan, id: number, k: number): number {
  if (k === 0) return det.own.starts[id]!;
  if (k === plan.ownRuns) return det.own.starts[id + 1]!;
  return det.own.starts[id]! + det.ownCuts[id * (plan.ownRuns - 1) + k - 1]!;
}

/**
 * Record `id`'s detail-only fields as the text of one JSON object (each own run's first key put
 * back): what a reader of the source fields decodes (src/data/known.ts). Needs a plan.
 */
export function ownFieldsJson(det: Details, id: number): string {
  const plan = det.plan!;
  let text = '{';
  let own = 0;
  for (const r of plan.runs) {
    if (r.kind === 'refs') own++; // a derived field's text, with holes: not a source field
    if (r.kind !== 'own') continue;
    const key = r.key.toString('latin1');
    text += (text === '{' && key.charCodeAt(0) === 0x2c ? key.slice(1) : key) + det.own.bytes.toString('utf8', ownAt(det, plan, id, own), ownAt(det, plan, id, ++own));
  }
  return `${text}}`;
}

/** The source offsets of a detail's list and own runs ([from, to) per run, in its arena), reused from send to send. */
let runBounds = new Float64Array(16);

/** Record `id`'s whole 200 detail body as served on day `today` (yyyymmdd); `embeds`: the index's (Embed). */
export function detailBytes(list: Fragments, det: Details, embeds: readonly Embed[], id: number, today: number): Buffer {
  const plan = det.plan;
  if (plan === null) return fragment(det.own, id, today);
  // (A list item's gap without a late value is its embedded record's: never inside a list run.)
  const gap = list.gaps === null || list.late === null ? -1 : list.gaps[id]!;
  // The late value once, its digits written straight into the body.
  const late = gap < 0 ? NaN : lateValue(list, id, today);
  const lateLength = gap < 0 ? 0 : numberLength(late);
  const runs = plan.runs;
  if (runBounds.length < runs.length * 2) runBounds = new Float64Array(runs.length * 2);
  const bounds = runBounds;
  let length = plan.head.length + plan.tail.length;
  let own = 0;
  for (let i = 0; i < runs.length; i++) {
    const r = runs[i]!;
    if (r.kind === 'embed') {
      length += embedLength(r.head, r.pieces, embeds[r.slot]!, id);
      continue;
    }
    if (r.kind === 'refs') {
      const a = ownAt(det, plan, id, own);
      const b = ownAt(det, plan, id, ++own);
      bounds[2 * i] = a;
      bounds[2 * i + 1] = b;
      length += r.key.length + b - a + refsLength(r.piece, embeds[r.slot]!, id);
      continue;
    }
    let a: number, b: number;
    if (r.kind === 'list') {
      a = listAt(list, det, plan, id, r.from);
      b = listAt(list, det, plan, id, r.to);
      if (gap > a && gap <= b) length += lateLength;
    } else {
      a = ownAt(det, plan, id, own);
      b = ownAt(det, plan, id, ++own);
      length += r.key.length;
    }
    bounds[2 * i] = a;
    bounds[2 * i + 1] = b;
    length += b - a;
  }
  const out = sendBuffer(length);
  let pos = plan.head.copy(out, 0);
  for (let i = 0; i < runs.length; i++) {
    const r = runs[i]!;
    if (r.kind === 'embed') pos = writeEmbed(r.head, r.pieces, embeds[r.slot]!, id, out, pos);
    else if (r.kind === 'refs') {
      const key = r.key;
      for (let k = 0; k < key.length; k++) out[pos++] = key[k]!;
      pos = writeRefs(det.own, r.piece, embeds[r.slot]!, id, bounds[2 * i]!, bounds[2 * i + 1]!, out, pos);
    }
    else if (r.kind === 'own') {
      const key = r.key;
      for (let k = 0; k < key.length; k++) out[pos++] = key[k]!;
      pos += det.own.bytes.copy(out, pos, bounds[2 * i]!, bounds[2 * i + 1]!);
    }
    else pos = copyRange(list, bounds[2 * i]!, bounds[2 * i + 1]!, gap, late, out, pos);
  }
  plan.tail.copy(out, pos);
  return out;
}
