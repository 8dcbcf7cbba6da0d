// src/data/fold.ts: case and accents folded away; plain ASCII takes a shortcut that must agree with
// the full NFKD path.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fold } from '../../src/data/fold.ts';

const full = (text: string) => text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();

test('fold: "input" -> folded', () => {
  const cases: [string, string][] = [
    ['Beyonce', 'beyonce'],
    ['Beyoncé', 'beyonce'],
    ['ZOË MARTÍN', 'zoe martin'],
    ['ÅNGSTRÖM \u212B', 'angstrom a'],
    ['ﬁne', 'fine'],
    ['Ǆ', 'dž'.normalize('NFKD').replace(/\p{M}/gu, '')],
    ['', ''],
  ];
  for (const [input, want] of cases) assert.equal(fold(input), want, input);
});

test('fold: every ASCII unit and a few past it -> the same as the full NFKD path', () => {
  for (let c = 0; c < 0x300; c++) {
    const s = `a${String.fromCharCode(c)}Z`;
    assert.equal(fold(s), full(s), `unit ${c.toString(16)}`);
  }
});
