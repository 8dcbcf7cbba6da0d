// The README stands on its own (issue 23): every path it names is in the repository, every link to
// a section finds its heading, and nothing points outside the checkout (`../`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchor = (heading: string) => heading.trim().toLowerCase().replace(/[^\w\- ]/g, '').replace(/ /g, '-');

test('links to files -> each file exists in the repository', () => {
  const targets = [...README.matchAll(/\]\(([^)#\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t));
  assert.deepEqual(targets.filter((t) => !existsSync(join(ROOT, t))), []);
});

test('links to sections -> each names a heading', () => {
  const headings = new Set([...README.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1]!)));
  const anchors = [...README.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
  assert.ok(anchors.length > 0);
  assert.deepEqual(anchors.filter((a) => !headings.has(a)), []);
});

test('no path outside the checkout (`../`) -> none', () => {
  assert.deepEqual(README.match(/`\.\.\/[^`]*`|\]\(\.\.\/[^)]*\)/g) ?? [], []);
});
