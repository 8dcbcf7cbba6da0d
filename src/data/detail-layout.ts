// A detail body stored without the bytes it shares with the record's list item (STYLE habit 2, issue
// 19): the detail's fields are runs, either a range of the list item's fields (the same name, the
// same shape, the same place at the start or not) or detail-only fields. Only the detail-only text
// is kept, in an arena of its own; a run of list fields is copied from the list arena at send time,
// found through the byte offsets of the field boundaries it starts and ends at (a few per record).
// The response envelope is the same for every record of a collection, so it is kept once.
import type { OutputField, ResourceDefinition } from '../resources/types.ts';
import { fragment, lateValue, numberLength, writeNumber, type Fragments } from './fragments.ts';
import { sendBuffer } from './send-buffer.ts';

export type Run = { readonly list: true; readonly from: number; readonly to: number } | { readonly list: false; readonly from: number; readonly to: number };

/** How a collection's detail is assembled; the same for every record, made from the definition. */
export interface DetailPlan {
  /** List-field runs (list field indices [from, to)) and own runs (detail field indices [from, to)). */
  readonly runs: readonly Run[];
  /** The list field boundaries runs start or end at, besides the first field and the end, ascending. */
  readonly listCuts: readonly number[];
  /** List field boundary -> its number among `listCuts` (-1 for 0 and the end). */
  readonly cutOf: Int32Array;
  /** The detail field boundaries own runs start or end at, ascending (for cutting the detail text). */
  readonly detailCuts: readonly number[];
  /** Own runs of a record: the detail-only arena holds their text back to back. */
  readonly ownRuns: number;
  readonly listFields: number;
  readonly detailFields: number;
  /** `{"success":true,"version":"v1","resource":"<name>","data":{` and `}}`. */
  readonly head: Buffer;
  readonly tail: Buffer;
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
  readonly cuts: Uint32Array;
  readonly ownCuts: Uint32Array;
}

const slot = (f: OutputField): string => (typeof f === 'string' ? f : `${f.name}:${f.pick.join(',')}`);
const fieldName = (f: OutputField): string => (typeof f === 'string' ? f : f.name);

/** The plan of a definition, or null when its late field is shown in the detail but not in a list run. */
export function detailPlan(def: ResourceDefinition): DetailPlan | null {
  const list = def.listFields.map(slot);
  const runs: { list: boolean; from: number; to: number }[] = [];
  def.detailFields.forEach((f, j) => {
    const li = list.indexOf(slot(f));
    // A field's text starts with a comma unless it is first: shared only when both agree on that.
    const shared = li >= 0 && (li === 0) === (j === 0);
    const last = runs.at(-1);
    if (shared && last?.list && last.to === li) last.to++;
    else if (shared) runs.push({ list: true, from: li, to: li + 1 });
    else if (last && !last.list) last.to++;
    else runs.push({ list: false, from: j, to: j + 1 });
  });
  const late = def.late?.field;
  if (late !== undefined && def.detailFields.some((f) => fieldName(f) === late)) {
    const li = def.listFields.findIndex((f) => fieldName(f) === late);
    if (!runs.some((r) => r.list && r.from <= li && li < r.to)) return null;
  }
  const m = def.listFields.length;
  const d = def.detailFields.length;
  const listCuts = new Set<number>();
  const detailCuts = new Set<number>();
  let j = 0;
  for (const r of runs) {
    if (r.list) {
      for (const b of [r.from, r.to]) if (b > 0 && b < m) listCuts.add(b);
      j += r.to - r.from;
    } else {
      for (const b of [r.from, r.to]) if (b > 0 && b < d) detailCuts.add(b);
      j = r.to;
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
    ownRuns: runs.filter((r) => !r.list).length,
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

/** Byte offset in the own arena of the start of own run `k` (k = ownRuns: the end) of record `id`. */
function ownAt(det: Details, plan: DetailPlan, id: number, k: number): number {
  if (k === 0) return det.own.starts[id]!;
  if (k === plan.ownRuns) return det.own.starts[id + 1]!;
  return det.own.starts[id]! + det.ownCuts[id * (plan.ownRuns - 1) + k - 1]!;
}

/** The source offsets of a detail's runs ([from, to) per run, in its arena), reused from send to send. */
let runBounds = new Float64Array(16);

/** Record `id`'s whole 200 detail body as served on day `today` (yyyymmdd). */
export function detailBytes(list: Fragments, det: Details, id: number, today: number): Buffer {
  const plan = det.plan;
  if (plan === null) return fragment(det.own, id, today);
  const gap = list.gaps === null ? -1 : list.gaps[id]!;
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
    let a: number, b: number;
    if (r.list) {
      a = listAt(list, det, plan, id, r.from);
      b = listAt(list, det, plan, id, r.to);
      if (gap > a && gap <= b) length += lateLength;
    } else {
      a = ownAt(det, plan, id, own);
      b = ownAt(det, plan, id, ++own);
    }
    bounds[2 * i] = a;
    bounds[2 * i + 1] = b;
    length += b - a;
  }
  const out = sendBuffer(length);
  let pos = plan.head.copy(out, 0);
  for (let i = 0; i < runs.length; i++) {
    const a = bounds[2 * i]!;
    const b = bounds[2 * i + 1]!;
    if (!runs[i]!.list) pos += det.own.bytes.copy(out, pos, a, b);
    else if (gap > a && gap <= b) {
      pos += list.bytes.copy(out, pos, a, gap);
      pos = writeNumber(late, out, pos);
      pos += list.bytes.copy(out, pos, gap, b);
    } else pos += list.bytes.copy(out, pos, a, b);
  }
  plan.tail.copy(out, pos);
  return out;
}
