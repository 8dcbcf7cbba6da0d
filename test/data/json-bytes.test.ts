// src/data/json-bytes.ts and the shape writers of src/data/shape.ts: the bytes written are those of
// JSON.stringify's text in UTF-8, for text that needs escapes (quotes, backslashes, every control
// character, U+2028), non-BMP characters, lone surrogates (JSON.parse gives them from `\ud800`
// escapes), numbers of every kind, and whole records of every collection.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ByteBuffer, writeString, writeValue } from '../../src/data/json-bytes.ts';
import { loadLinked } from '../../src/data/load.ts';
import { compileFields, compileFieldsWriter } from '../../src/data/shape.ts';
import { generateRecords } from '../../src/generate/generate.ts';
import { RESOURCE_LIST } from '../../src/resources/index.ts';

const controls = Array.from({ length: 0x20 }, (_, c) => String.fromCharCode(c)).join('');
const TEXTS = [
  '',
  'a',
  'plain ascii text long enough for the native write path',
  'quote " backslash \\ slash / tab \t newline \n',
  controls,
  `${controls} and long enough for the native path to be considered`,
  '\u007f\u0080\u00e9\u07ff\u0800\u2028\u2029\uffff',
  'non-BMP 😀 𝄞 at the end 😀',
  '😀'.repeat(20),
  '\ud800',
  '\udfff',
  'lone \ud83d in the middle, and a lone low \ude00 too, long enough',
  '\ude00\ud83d',
  'pair then lone \ud83d\ude00\ud83d',
  'high then a unit above the low ones \ud83d\ue000 \udbff\uffff',
  'Zoë Saldaña — Ñandú «quoted» 東京',
  'x'.repeat(23) + '"',
  'x'.repeat(24) + '\\',
];
const NUMBERS = [0, -0, 1, -1, 9, 10, 99, 100, 2147483647, -2147483648, 2147483648, 2 ** 53, -(2 ** 53) - 2, 1e21, 1e-7, 0.1, 7.3, -5.5, 123456789.125, Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity, -Infinity];

const bytes = (write: (out: ByteBuffer) => void): Buffer => {
  const out = new ByteBuffer();
  write(out);
  return Buffer.from(out.buf.subarray(0, out.pos));
};

test('writeString: each text -> the UTF-8 of JSON.stringify(text)', () => {
  for (const s of TEXTS) assert.deepEqual(bytes((out) => writeString(out, s)), Buffer.from(JSON.stringify(s)), JSON.stringify(s));
  // Every unit below 0x800 and every surrogate alone, one at a time.
  for (let c = 0; c < 0xe000; c = c < 0x800 ? c + 1 : c < 0xd700 ? c + 0x100 : c + 1) {
    const s = `a${String.fromCharCode(c)}b`;
    assert.deepEqual(bytes((out) => writeString(out, s)), Buffer.from(JSON.stringify(s)), `unit ${c.toString(16)}`);
  }
});

test('writeValue: numbers, booleans, null, arrays and objects -> the UTF-8 of JSON.stringify', () => {
  for (const n of NUMBERS) assert.equal(bytes((out) => writeValue(out, n)).toString(), JSON.stringify(n), String(n));
  const values: unknown[] = [
    null,
    true,
    false,
    [],
    {},
    [1, 'a', null, true, [2, [3]], { b: 'c' }, undefined],
    { a: 1, b: undefined, 'k"ey\n': 'v\u0001', '😀': ['\ud800'], nested: { x: [], y: {} } },
    { '2': 'integer-like keys come first', a: 1, '1': 'in ascending order' },
    { when: new Date(0) },
    Object.fromEntries(TEXTS.map((t, i) => [t, NUMBERS[i] ?? t])),
  ];
  for (const v of values) assert.equal(bytes((out) => writeValue(out, v)).toString(), JSON.stringify(v), JSON.stringify(v));
  // An inherited property is not serialized, as JSON.stringify leaves it out.
  const inherits = Object.create({ hidden: 1 }, { own: { value: 2, enumerable: true } });
  assert.equal(bytes((out) => writeValue(out, inherits)).toString(), JSON.stringify(inherits));
});

test('every collection: compileFieldsWriter == compileFields (JSON.stringify) for every field, over tricky text', async () => {
  const sources = generateRecords({ scale: 30 }) as Record<string, Record<string, unknown>[]>;
  for (const def of RESOURCE_LIST) {
    sources[def.name]!.slice(0, TEXTS.length).forEach((r, i) => {
      for (const [name, schema] of Object.entries(def.source.properties)) {
        if (schema.type === 'string' && !schema.format && !schema.ref && !schema.enum && typeof r[name] === 'string') r[name] = TEXTS[i]!;
        if (schema.type === 'array' && schema.items.type === 'string' && !schema.items.format && Array.isArray(r[name])) r[name] = [TEXTS[i]!, TEXTS[(i + 1) % TEXTS.length]!];
      }
    });
  }
  const linked = await loadLinked(sources);
  for (const def of RESOURCE_LIST) {
    for (const fields of [def.listFields, def.detailFields].map((all) => all.filter((f) => f !== def.late?.field))) {
      const want = compileFields(def, fields);
      const got = compileFieldsWriter(def, fields);
      const withComma = compileFieldsWriter(def, fields, true);
      linked[def.name].forEach((r, id) => {
        assert.equal(bytes((out) => got(r, out)).toString(), want(r), `${def.name} ${id}`);
        assert.equal(bytes((out) => withComma(r, out)).toString(), `,${want(r)}`, `${def.name} ${id} with a comma`);
      });
    }
  }
});
