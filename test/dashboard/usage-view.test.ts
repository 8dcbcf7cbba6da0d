// The usage chart and tables: bars proportional to the counts, one slot per day of that month, the
// same numbers in the table, a text alternative that sums them up.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dailyChart, dailyTable, monthName, monthsTable } from '../../src/dashboard/usage-view.ts';

const heights = (svg: string, cls: string) => [...svg.matchAll(new RegExp(`class="${cls}"[^>]*height="([\\d.]+)"`, 'g'))].map((m) => Number(m[1]));

test('bars: proportional to the counts against a round top; zero draws nothing', () => {
  const svg = dailyChart('2026-11', [
    { date: '2026-11-03', success: 8, rejected: 4 },
    { date: '2026-11-20', success: 2, rejected: 0 },
  ]).text;
  const ok = heights(svg, 'bar-ok');
  const rejected = heights(svg, 'bar-rej');
  assert.equal(ok.length, 2);
  assert.equal(rejected.length, 1, 'no bar for 0 rejections');
  assert.ok(Math.abs(ok[0]! / ok[1]! - 4) < 0.01);
  assert.ok(Math.abs(ok[0]! / rejected[0]! - 2) < 0.01);
  assert.match(svg, />10<\/text>/, 'the axis top is 10, the round number above 8');
  assert.match(svg, /<title id="chart-title">Requests per day, November 2026<\/title>/);
  assert.match(svg, /<desc id="chart-desc">10 successful and 4 rejected requests over 2 days/);
});

test('days: a slot per day of the month (February 2028 has 29); labels 1, 5, 10...', () => {
  const svg = dailyChart('2028-02', []).text;
  const labels = [...svg.matchAll(/text-anchor="middle">(\d+)</g)].map((m) => Number(m[1]));
  assert.deepEqual(labels, [1, 5, 10, 15, 20, 25]);
  assert.match(svg, /No requests yet this month\./);
  // A bar's width is a share of its day's slot: 29 slots in February 2028, 28 in February 2027.
  const width = (month: string) => Number(/class="bar-ok"[^>]* width="([\d.]+)"/.exec(dailyChart(month, [{ date: `${month}-10`, success: 1, rejected: 0 }]).text)?.[1]);
  assert.ok(Math.abs(width('2028-02') / width('2027-02') - 28 / 29) < 0.01, `${width('2028-02')} / ${width('2027-02')}`);
});

test('tables: the days with traffic and the six months, numbers grouped', () => {
  const day = dailyTable('2026-11', [{ date: '2026-11-03', success: 12345, rejected: 0 }]).text;
  assert.match(day, /<time datetime="2026-11-03">2026-11-03<\/time><\/th><td>12,345<\/td><td>0<\/td>/);
  assert.match(dailyTable('2026-11', []).text, /No requests yet this month\./);
  const months = monthsTable([{ month: '2026-11', used: 100, success: 100, rejected: 7 }]).text;
  assert.match(months, /<time datetime="2026-11">Nov 2026<\/time><\/th><td>100<\/td><td>100<\/td><td>7<\/td>/);
  assert.equal(monthName('2026-01'), 'January 2026');
});
