// The access log: key-shaped strings and credential parameters are redacted, the client address is
// the peer (or the proxy's last X-Forwarded-For entry), and both log formats carry the same entry.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { isWellFormedKey } from '../../src/access/key-format.ts';
import { clientAddress } from '../../src/access/client-address.ts';
import { createAccessLog, redactTarget } from '../../src/http/access-log.ts';
import { createLogger } from '../../src/log.ts';

const KEY = 'cel_4fQ9x2LmZp8RtY6wKd3NbV7sHc1JgE5u';
/** A real key (made by generateKey): its body, after `cel_`, carries a valid checksum. */
const REAL = 'cel_ItegzWnh5xv3scuA52bWyCC4QYVGSlsq1f1Vk4';
const BODY = REAL.slice(4);
const encodeAll = (s: string) => [...s].map((c) => '%' + c.charCodeAt(0).toString(16).padStart(2, '0')).join('');

const fakeReq = (url: string, headers: Record<string, string> = {}, remoteAddress = '10.1.2.3', method = 'GET') =>
  ({ url, method, headers, socket: { remoteAddress } }) as unknown as IncomingMessage;

describe('redactTarget', () => {
  const cases: [string, string][] = [
    ['/api/v1/celebrities?page=2', '/api/v1/celebrities?page=2'],
    [`/api/v1/celebrities?x=${KEY}`, '/api/v1/celebrities?x=cel_[redacted]'],
    [`/api/v1/${KEY}/news`, '/api/v1/cel_[redacted]/news'],
    [`/x?q=cel%5F${KEY.slice(4)}`, '/x?q=cel_[redacted]'],
    ['/x?api_key=abc&page=1', '/x?api_key=[redacted]&page=1'],
    ['/x?page=1&X-API-KEY=abc', '/x?page=1&X-API-KEY=[redacted]'],
    ['/x?token=t&password=p&secret=s&auth=a', '/x?token=[redacted]&password=[redacted]&secret=[redacted]&auth=[redacted]'],
    ['/x?search=keyboard', '/x?search=keyboard'],
    // Redacted after percent-decoding (issue 15 item 6).
    [`/x?search=c%65l_${BODY}`, '/x?search=cel_[redacted]'],
    [`/x?search=${encodeAll(REAL)}&page=2`, '/x?search=cel_[redacted]&page=2'],
    [`/x?search=%2563el_${BODY}`, '/x?search=cel_[redacted]'],
    ['/x?api%5Fkey=abc&page=1', '/x?api%5Fkey=[redacted]&page=1'],
    // A key body without its prefix, found by its checksum, wherever it is.
    [`/x?q=${BODY}`, '/x?q=cel_[redacted]'],
    [`/api/v1/celebrities/${BODY}`, '/api/v1/celebrities/cel_[redacted]'],
    [`/x?q=el_${BODY}`, '/x?q=cel_[redacted]'],
    [`/x?q=abc${BODY}xyz`, '/x?q=cel_[redacted]'],
    [`/x?q=${encodeURIComponent(' my key ' + BODY)}`, '/x?q=cel_[redacted]'],
    [`/x?q=${BODY.slice(0, 20)}%${BODY.slice(20)}`, `/x?q=${BODY.slice(0, 20)}%${BODY.slice(20)}`],
    // Base62 of the right length without a valid checksum is not a key.
    [`/x?q=${'A'.repeat(38)}&r=${BODY.slice(0, -1)}${BODY.at(-1) === 'a' ? 'b' : 'a'}`, `/x?q=${'A'.repeat(38)}&r=${BODY.slice(0, -1)}${BODY.at(-1) === 'a' ? 'b' : 'a'}`],
  ];
  for (const [input, expected] of cases) it(`${input} -> ${expected}`, () => assert.equal(redactTarget(input), expected));

  it('the key of these cases is a real one', () => assert.equal(isWellFormedKey(REAL), true));

  it('a very long target is cut to 1024 characters', () => {
    assert.equal(redactTarget('/' + 'a'.repeat(5000)).length, 1024 + 3);
  });
});

describe('clientAddress', () => {
  const cases: [string, Record<string, string>, boolean, string][] = [
    ['peer without proxy', { 'x-forwarded-for': '1.1.1.1' }, false, '10.1.2.3'],
    ['trusted proxy, one hop', { 'x-forwarded-for': '198.51.100.4' }, true, '198.51.100.4'],
    ['trusted proxy, forged first entry', { 'x-forwarded-for': '6.6.6.6, 198.51.100.4' }, true, '198.51.100.4'],
    ['trusted proxy, no header', {}, true, '10.1.2.3'],
    ['trusted proxy, empty last entry', { 'x-forwarded-for': '1.1.1.1,' }, true, '10.1.2.3'],
    ['trusted proxy, absurd entry', { 'x-forwarded-for': 'x'.repeat(100) }, true, '10.1.2.3'],
  ];
  for (const [name, headers, trust, expected] of cases) {
    it(`${name} -> ${expected}`, () => assert.equal(clientAddress(fakeReq('/', headers), trust), expected));
  }
});

describe('createAccessLog', () => {
  for (const format of ['json', 'text'] as const) {
    it(`${format}: one line per response with id, method, path, status, time and client; never the key`, () => {
      const lines: string[] = [];
      const access = createAccessLog(createLogger({ format, write: (l) => lines.push(l) }), false);
      const start = performance.now();
      access(fakeReq(`/api/v1/news?apikey=${KEY}`, { 'x-api-key': KEY }), 200, 'ab12-1', start);
      access(fakeReq('/api/v1/news', { 'x-api-key': KEY }), 500, 'ab12-2', start);
      assert.equal(lines.length, 2);
      assert.ok(!lines.some((l) => l.includes(KEY.slice(4))));
      if (format === 'json') {
        const [ok, failed] = lines.map((l) => JSON.parse(l));
        assert.deepEqual(
          { level: ok.level, msg: ok.msg, requestId: ok.requestId, method: ok.method, path: ok.path, status: ok.status, client: ok.client },
          { level: 'info', msg: 'request', requestId: 'ab12-1', method: 'GET', path: '/api/v1/news?apikey=[redacted]', status: 200, client: '10.1.2.3' },
        );
        assert.equal(typeof ok.ms, 'number');
        assert.equal(failed.level, 'error', '5xx pass a warn-level filter');
      } else {
        assert.match(lines[0]!, / INFO request \{"requestId":"ab12-1"/);
      }
    });
  }

  it('--log-level warn drops the 2xx lines and keeps the 5xx', () => {
    const lines: string[] = [];
    const access = createAccessLog(createLogger({ level: 'warn', write: (l) => lines.push(l) }), false);
    access(fakeReq('/a'), 200, 'x-1', performance.now());
    access(fakeReq('/a'), 503, 'x-2', performance.now());
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /"status":503/);
  });
});
