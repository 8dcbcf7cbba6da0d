// What a first start holds at each phase (issue 19), never part of npm test:
//   node --import tsx test/bench/read-memory.ts DATA_DIR
// Runs the loader with the real index builders (no boot cache) and prints, as each collection's
// builder starts and finishes, the process's RSS, V8 heap used and array buffers (MB), the peaks of
// each (sampled every 100 ms and at each phase), and the CPU seconds of the whole load.
import { loadCollections } from '../../src/data/load.ts';
import { indexBuilder } from '../../src/data/indexes.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: read-memory.ts DATA_DIR');
const MB = (n: number) => (n / 1048576).toFixed(0);
const peak = { rss: 0, heap: 0, buffers: 0 };
const sample = () => {
  const m = process.memoryUsage();
  peak.rss = Math.max(peak.rss, m.rss);
  peak.heap = Math.max(peak.heap, m.heapUsed);
  peak.buffers = Math.max(peak.buffers, m.arrayBuffers);
  return m;
};
const cpu0 = process.cpuUsage();
const cpu = () => {
  const u = process.cpuUsage(cpu0);
  return ((u.user + u.system) / 1e6).toFixed(1);
};
const phase = (what: string) => {
  const m = sample();
  process.stdout.write(`${cpu().padStart(6)} s CPU  ${what.padEnd(24)} rss ${MB(m.rss)}  heap ${MB(m.heapUsed)}  buffers ${MB(m.arrayBuffers)}  (peaks ${MB(peak.rss)} / ${MB(peak.heap)} / ${MB(peak.buffers)})\n`);
};
const timer = setInterval(sample, 100);
phase('start');
await loadCollections(dir, (def, hint) => {
  phase(`${def.name} build starts`);
  const sink = indexBuilder(def, { records: 0, bytes: hint.bytes });
  return {
    add: (r) => sink.add(r),
    finish: () => {
      const ix = sink.finish();
      phase(`${def.name} built`);
      return ix;
    },
  };
});
phase('loaded');
clearInterval(timer);
