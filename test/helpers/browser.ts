// Debian's Chromium driven by playwright-core (never `playwright install`): one browser per test file,
// a fresh context (cookies, storage) per flow, axe with the WCAG 2.2 AA tags, and screenshots for the
// README when CELEBRITY_API_SCREENSHOTS=1.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContextOptions, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
/** Playwright adds a fresh --user-data-dir in a temporary folder for every launch. */
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}

const CSP_REPORTS = new WeakMap<Page, string[]>();

/** A page in a fresh context; what the browser says of the Content-Security-Policy is kept for assertCsp. */
export async function newPage(browser: Browser, options: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1000, height: 800 }, ...options });
  const page = await context.newPage();
  const reports: string[] = [];
  CSP_REPORTS.set(page, reports);
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) reports.push(message.text());
  });
  return page;
}

/** The browser refused nothing under the page's CSP (an inline style or script would be refused). */
export function assertCspKept(page: Page): void {
  assert.deepEqual(CSP_REPORTS.get(page), [], 'Content-Security-Policy violations');
}

const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21aa', 'wcag22aa'];
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** Every rule of those tags, as @axe-core/playwright's withTags() asked. */
const AXE_RUN = `axe.run(document, ${JSON.stringify({ runOnly: { type: 'tag', values: AXE_TAGS } })})`;

interface AxeResults {
  violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
}

/** Zero axe violations on the page as it is now, with a readable list when there are some. */
export async function assertAccessible(page: Page, state: string): Promise<void> {
  // axe-core runs in the page itself, as @axe-core/playwright's legacy mode ran it (these pages have
  // no frames to combine). Both scripts go in through the DevTools protocol, which the pages' CSP
  // (no inline script, no eval) does not apply to; a page that navigated has lost axe, so it is
  // put in again when missing.
  if (!(await page.evaluate('typeof axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const { violations } = (await page.evaluate(AXE_RUN)) as AxeResults;
  const found = violations.map((v) => `${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.map((n) => n.target.join(' ')).join('\n    ')}`);
  assert.deepEqual(found, [], `axe violations on ${state}`);
}

/** No horizontal scrolling: nothing wider than the viewport. */
export async function assertNoHorizontalScroll(page: Page, state: string): Promise<void> {
  const [scroll, client] = (await page.evaluate('[document.documentElement.scrollWidth, document.documentElement.clientWidth]')) as [number, number];
  assert.ok(scroll <= client, `${state}: page is ${scroll}px wide in a ${client}px viewport`);
}

const DOCS = fileURLToPath(new URL('../../docs/', import.meta.url));

/** Writes docs/<name>.png when CELEBRITY_API_SCREENSHOTS=1 (the README's pictures); else nothing. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.CELEBRITY_API_SCREENSHOTS !== '1') return;
  await mkdir(DOCS, { recursive: true });
  await page.screenshot({ path: join(DOCS, `${name}.png`), fullPage: true });
}
