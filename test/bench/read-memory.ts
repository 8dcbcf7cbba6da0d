// What a first start holds at each phase (issue 19), never part of npm test:
//   node --import tsx test/bench/read-memory.ts DATA_DIR
// Runs the loader with the real index builders (no boot cache) and prints, as each collection's
// builder starts and finishes, the process's RSS, V8 heap used and array buffers (MB), the peaks of
// each (sampled every 100 ms and at each phase), and the CPU seconds of the whole load. A watchdog
// stops the run when the RSS passes --max-rss-gb (18 by default: the machine is shared), saying where.
// --live: a full garbage collection before each phase's line, so its heap is what is live then (the
// run's CPU then includes those collections).
import { loadCollections } from '../../src/data/load.ts';
import { indexBuilder } from '../../src/data/indexes.ts';
import { collectGarbage } from '../../src/data/gc.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: read-memory.ts DATA_DIR [--max-rss-gb 18]');
const maxAt = process.argv.indexOf('--max-rss-gb');
const MAX_RSS = (maxAt > 0 ? Number(process.argv[maxAt + 1]) : 18) * 1e9;
let where = 'start';
const LIVE = process.argv.includes('--live');
const MB = (n: number) => (n / 1048576).toFixed(0);
const peak = { rss: 0, heap: 0, buffers: 0 };
const sample = () => {
  const m = process.memoryUsage();
  peak.rss = Math.max(peak.rss, m.rss);
  peak.heap = Math.max(peak.heap, m.heapUsed);
  peak.buffers = Math.max(peak.buffers, m.arrayBuffers);
  if (m.rss > MAX_RSS) {
    process.stdout.write(`watchdog: RSS ${MB(m.rss)} MB passed ${MB(MAX_RSS)} MB after "${where}" (heap ${MB(m.heapUsed)}, buffers ${MB(m.arrayBuffers)}); stopped\n`);
    process.exit(3);
  }
  return m;
};
const cpu0 = process.cpuUsage();
const cpu = () => {
  const u = process.cpuUsage(cpu0);
  return ((u.user + u.system) / 1e6).toFixed(1);
};
const phase = (what: string) => {
  where = what;
  if (LIVE) collectGarbage();
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
