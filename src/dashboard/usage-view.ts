// The usage panel's numbers as a person reads them: this month's days as an inline SVG bar chart and
// the same numbers as a table, and the last six months as a table (issue 9).
import type { DailyUsage, MonthlyUsage } from '../store/types.ts';
import { html, type Html } from './html.ts';

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** '2026-11' -> 'November 2026' (or 'Nov 2026', where a table must fit 320 px). */
export function monthName(month: string, short = false): string {
  const name = MONTHS[Number(month.slice(5, 7)) - 1]!;
  return `${short ? name.slice(0, 3) : name} ${month.slice(0, 4)}`;
}

/** An ISO instant as a person reads it, always in UTC (the quota's calendar): '2026-12-01 00:00 UTC'. */
export function utcText(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** 12,345: digits grouped as people read them. */
export const count = (n: number): string => n.toLocaleString('en-US');

// Chart geometry, in viewBox units; the SVG scales to the width it is given (320 px and up).
const W = 640;
const H = 220;
const LEFT = 44;
const RIGHT = 8;
const TOP = 10;
const BOTTOM = 30;

/** A round upper bound for the y axis: 1, 2, 5, 10, 20, 50... */
function ceiling(max: number): number {
  let step = 1;
  for (;;) {
    for (const m of [1, 2, 5]) if (m * step >= max) return m * step;
    step *= 10;
  }
}

export function dailyChart(month: string, daily: readonly DailyUsage[]): Html {
  const days = new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)), 0)).getUTCDate();
  const byDay = new Map(daily.map((d) => [Number(d.date.slice(8, 10)), d]));
  const top = ceiling(Math.max(1, ...daily.map((d) => Math.max(d.success, d.rejected))));
  const slot = (W - LEFT - RIGHT) / days;
  const bar = slot * 0.38;
  const plotH = H - TOP - BOTTOM;
  const y = (n: number) => TOP + plotH - (n / top) * plotH;
  const bars: Html[] = [];
  const labels: Html[] = [];
  for (let day = 1; day <= days; day++) {
    const x = LEFT + (day - 1) * slot + slot * 0.1;
    const d = byDay.get(day);
    if (d && d.success > 0) bars.push(html`<rect class="bar-ok" x="${x.toFixed(1)}" y="${y(d.success).toFixed(1)}" width="${bar.toFixed(1)}" height="${(TOP + plotH - y(d.success)).toFixed(1)}"/>`);
    if (d && d.rejected > 0) bars.push(html`<rect class="bar-rej" x="${(x + bar).toFixed(1)}" y="${y(d.rejected).toFixed(1)}" width="${bar.toFixed(1)}" height="${(TOP + plotH - y(d.rejected)).toFixed(1)}"/>`);
    if (day === 1 || day % 5 === 0) labels.push(html`<text x="${(x + bar).toFixed(1)}" y="${H - 8}" text-anchor="middle">${day}</text>`);
  }
  const success = daily.reduce((n, d) => n + d.success, 0);
  const rejected = daily.reduce((n, d) => n + d.rejected, 0);
  const title = `Requests per day, ${monthName(month)}`;
  const desc = daily.length === 0 ? 'No requests yet this month.' : `${count(success)} successful and ${count(rejected)} rejected requests over ${daily.length} ${daily.length === 1 ? 'day' : 'days'}; the table below gives each day.`;
  return html`<figure>
<figcaption id="chart-caption">${title}</figcaption>
<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title chart-desc" focusable="false">
<title id="chart-title">${title}</title>
<desc id="chart-desc">${desc}</desc>
<line class="axis" x1="${LEFT}" y1="${TOP + plotH}" x2="${W - RIGHT}" y2="${TOP + plotH}"/>
<line class="axis" x1="${LEFT}" y1="${TOP}" x2="${LEFT}" y2="${TOP + plotH}"/>
<text x="${LEFT - 6}" y="${TOP + 12}" text-anchor="end">${count(top)}</text>
<text x="${LEFT - 6}" y="${TOP + plotH}" text-anchor="end">0</text>
${bars}${labels}
</svg>
<ul class="legend" aria-hidden="true"><li><span class="swatch ok"></span>Successful</li><li><span class="swatch rej"></span>Rejected</li></ul>
</figure>`;
}

export function dailyTable(month: string, daily: readonly DailyUsage[]): Html {
  const rows =
    daily.length === 0
      ? html`<tr><td colspan="3">No requests yet this month.</td></tr>`
      : daily.map((d) => html`<tr><th scope="row"><time datetime="${d.date}">${d.date}</time></th><td>${count(d.success)}</td><td>${count(d.rejected)}</td></tr>`);
  return html`<table>
<caption>Requests per day, ${monthName(month)}</caption>
<thead><tr><th scope="col">Day (UTC)</th><th scope="col">Successful</th><th scope="col">Rejected</th></tr></thead>
<tbody>${rows}</tbody>
</table>`;
}

export function monthsTable(months: readonly MonthlyUsage[]): Html {
  return html`<table>
<caption>The last six months</caption>
<thead><tr><th scope="col">Month</th><th scope="col">Counted</th><th scope="col">Successful</th><th scope="col">Rejected</th></tr></thead>
<tbody>${months.map((m) => html`<tr><th scope="row"><time datetime="${m.month}">${monthName(m.month, true)}</time></th><td>${count(m.used)}</td><td>${count(m.success)}</td><td>${count(m.rejected)}</td></tr>`)}</tbody>
</table>`;
}
