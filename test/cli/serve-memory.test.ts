// `serve` keeps no snapshot a reload replaced: after a --watch reload of one file, a heap snapshot of
// the server holds one index of that collection, not two (the first snapshot stayed in the serve
// command's suspended frame, and with it every collection a reload replaced).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appendFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, tempDir, writeData } from '../helpers/serve-harness.ts';
import { spawnListening } from '../helpers/serve-process.ts';

const BIN = fileURLToPath(new URL('../../bin/celebrity-api', import.meta.url));

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; edge_fields: string[]; edge_types: [string[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

/** The collection indexes in the heap (objects with `def`, `slugs` and `searchFrom`), by their definition's name. */
function collectionIndexes(h: HeapSnapshot): string[] {
  const { node_fields: nf, edge_fields: ef, edge_types: [types] } = h.snapshot.meta;
  const N = nf.length;
  const E = ef.length;
  const edgeCount = nf.indexOf('edge_count');
  const nameAt = nf.indexOf('name');
  const [typeAt, nameOrIndex, toNode] = [ef.indexOf('type'), ef.indexOf('name_or_index'), ef.indexOf('to_node')];
  const firstEdge: number[] = [];
  for (let i = 0, e = 0; i < h.nodes.length / N; i++) {
    firstEdge.push(e);
    e += h.nodes[i * N + edgeCount]! * E;
  }
  const props = (node: number): Map<string, number> => {
    const out = new Map<string, number>();
    const end = firstEdge[node]! + h.nodes[node * N + edgeCount]! * E;
    for (let e = firstEdge[node]!; e < end; e += E) {
      if (types[h.edges[e + typeAt]!] === 'property') out.set(h.strings[h.edges[e + nameOrIndex]!]!, h.edges[e + toNode]! / N);
    }
    return out;
  };
  const found: string[] = [];
  for (let i = 0; i < h.nodes.length / N; i++) {
    const p = props(i);
    if (!p.has('def') || !p.has('slugs') || !p.has('searchFrom')) continue;
    const name = props(p.get('def')!).get('name');
    found.push(name === undefined ? '?' : h.strings[h.nodes[name * N + nameAt]!]!);
  }
  return found.sort();
}

test('serve --watch, outfits.json edited -> after "data reloaded" the heap holds one outfits index, not the replaced one too', async () => {
  const tmp = await tempDir('serve-memory');
  try {
    const data = join(tmp.dir, 'data');
    await writeData(data);
    const serve = await spawnListening(process.execPath, ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${tmp.dir}`, BIN, 'serve', '--insecure-http', '--port', '0', '--state', join(tmp.dir, 'state'), '--data', data, '--watch']);
    try {
      // An edit, not a touch: a touched file of the same bytes keeps its collections (content-digest.ts).
      await appendFile(join(data, 'outfits.json'), ' ');
      await serve.waitForLog('"data reloaded"');
      serve.child.kill('SIGUSR2');
      await eventually(async () => (await readdir(tmp.dir)).some((f) => f.endsWith('.heapsnapshot')), undefined, 'a heap snapshot');
    } finally {
      await serve.stop(); // after the snapshot: the signal is handled once it is written
    }
    const file = (await readdir(tmp.dir)).find((f) => f.endsWith('.heapsnapshot'))!;
    const indexes = collectionIndexes(JSON.parse(await readFile(join(tmp.dir, file), 'utf8')) as HeapSnapshot);
    assert.deepEqual(indexes, ['celebrities', 'movies', 'news', 'outfits', 'reviews']);
  } finally {
    await tmp.remove();
  }
});
