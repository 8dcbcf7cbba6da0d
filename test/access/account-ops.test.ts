// Which emails an account may be made with, and which still name one stored before the rule was
// tightened (issue 24, item 2): input -> accepted or refused, for both rules.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lookupEmail, normalizeEmail } from '../../src/access/account-ops.ts';
import { AccountError } from '../../src/access/types.ts';

const PENTEST_ESCAPES = '\x1b[2J\x1b[31mowned\x1b]0;pwned\x07x@e.io';
const PENTEST_MARKUP = `"><svg/onload=alert(1)>'<b>x@e.io`;

test('normalizeEmail (new accounts, renames): input -> canonical, or INVALID_EMAIL', () => {
  const cases: [string, string | null][] = [
    ['Ann@Example.com', 'ann@example.com'],
    ['  ann@example.com ', 'ann@example.com'],
    ['first.last+tag@sub.example.co.uk', 'first.last+tag@sub.example.co.uk'],
    ['josé@exämple.de', 'josé@exämple.de'],
    [PENTEST_ESCAPES, null],
    [PENTEST_MARKUP, null],
    ['a<b@e.io', null],
    ['a>b@e.io', null],
    ['a"b@e.io', null],
    ["a'b@e.io", null],
    ['a\x00b@e.io', null],
    ['a\x07b@e.io', null],
    ['a\x7fb@e.io', null],
    ['a\x9bb@e.io', null],
    ['a\u202eb@e.io', null],
    ['a@e.io\u200b', null],
    ['a b@e.io', null],
    ['nope', null],
    [`${'a'.repeat(250)}@e.io`, null],
  ];
  for (const [input, expected] of cases) {
    if (expected === null) assert.throws(() => normalizeEmail(input), (e: AccountError) => e.code === 'INVALID_EMAIL', JSON.stringify(input));
    else assert.equal(normalizeEmail(input), expected, JSON.stringify(input));
  }
});

test('lookupEmail (finding a stored account): the older rule, so accounts made under it keep working', () => {
  for (const stored of [PENTEST_ESCAPES, PENTEST_MARKUP, 'a\x7fb@e.io']) assert.equal(lookupEmail(stored), stored.toLowerCase());
  for (const never of ['nope', 'a b@e.io', `${'a'.repeat(250)}@e.io`]) assert.throws(() => lookupEmail(never), (e: AccountError) => e.code === 'INVALID_EMAIL');
});
