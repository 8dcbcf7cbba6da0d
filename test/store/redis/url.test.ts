// What a --redis-url names (src/store/redis/url.ts): one Redis, a cluster, a Sentinel-managed primary,
// with TLS and credentials; a URL that names none fails with a message that says what was expected.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, resolveRedisUrl } from '../../../src/config.ts';
import { describeTarget, parseRedisUrl, redactUrl, RedisUrlError } from '../../../src/store/redis/url.ts';

test('URLs -> the deployment they name', () => {
  const cases: [string, unknown][] = [
    ['redis://127.0.0.1:6379', { mode: 'single', url: 'redis://127.0.0.1:6379' }],
    ['rediss://u:p@cache.example:6380/2', { mode: 'single', url: 'rediss://u:p@cache.example:6380/2' }],
    ['redis+cluster://10.0.0.1:7000,10.0.0.2:7001', { mode: 'cluster', tls: false, nodes: [{ host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7001 }], name: '', username: undefined, password: undefined }],
    ['rediss+cluster://app:s%40cret@a.example,[::1]:7002/', { mode: 'cluster', tls: true, nodes: [{ host: 'a.example', port: 6379 }, { host: '::1', port: 7002 }], name: '', username: 'app', password: 's@cret' }],
    ['redis+sentinel://s1:26379,s2:26380,s3/mymaster', { mode: 'sentinel', tls: false, nodes: [{ host: 's1', port: 26379 }, { host: 's2', port: 26380 }, { host: 's3', port: 26379 }], name: 'mymaster', username: undefined, password: undefined }],
    ['REDISS+SENTINEL://:pw@s1:5000/prod-primary', { mode: 'sentinel', tls: true, nodes: [{ host: 's1', port: 5000 }], name: 'prod-primary', username: undefined, password: 'pw' }],
  ];
  for (const [url, expected] of cases) assert.deepEqual(parseRedisUrl(url), expected, url);
});

test('URLs that name no deployment -> an error saying what is wrong and what is expected', () => {
  const cases: [string, RegExp][] = [
    ['http://x', /not a Redis URL: http:\/\//],
    ['localhost:6379', /not a Redis URL: localhost:\/\/|not a URL/],
    ['redis+clutser://h:1', /unknown kind of Redis deployment "redis\+clutser:\/\/"/],
    ['redis+cluster://', /cluster URL: no host:port given/],
    ['redis+cluster://h:1,h:99999', /port of "h:99999" must be 1-65535/],
    ['redis+cluster://h:1,,h:2', /"" is not host:port/],
    ['redis+cluster://h:1/3', /a cluster has database 0 only/],
    ['redis+cluster://h:1?tls=1', /no \?query/],
    ['redis+sentinel://s1:26379', /the path must be the primary's name/],
    ['redis+sentinel://s1:26379/a/b', /the path must be the primary's name/],
    ['redis+sentinel://u:%zz@s1/m', /bad percent-encoding/],
  ];
  for (const [url, message] of cases) {
    assert.throws(() => parseRedisUrl(url), (e: Error) => e instanceof RedisUrlError && message.test(e.message) && e.message.includes('expected redis://'), url);
  }
});

test('--redis-url and $CELEBRITY_API_REDIS_URL: the multi-host forms pass, a bad one is a ConfigError', () => {
  assert.equal(resolveRedisUrl('redis+sentinel://s1,s2/m', {}), 'redis+sentinel://s1,s2/m');
  assert.equal(resolveRedisUrl(undefined, { CELEBRITY_API_REDIS_URL: 'rediss+cluster://h:7000' }), 'rediss+cluster://h:7000');
  assert.equal(resolveRedisUrl(undefined, {}), null);
  assert.throws(() => resolveRedisUrl('redis+sentinel://s1', {}), (e: Error) => e instanceof ConfigError && e.message.startsWith('--redis-url: sentinel URL'));
});

test('logs never carry the password', () => {
  assert.equal(redactUrl('redis://u:secret@h:1/0'), 'redis://u:***@h:1/0');
  assert.equal(redactUrl('rediss+cluster://:secret@h:1,h:2'), 'rediss+cluster://:***@h:1,h:2');
  assert.equal(describeTarget(parseRedisUrl('rediss+sentinel://u:secret@s1:1,[::1]:2/m')), 'rediss+sentinel://s1:1,[::1]:2/m');
  assert.equal(describeTarget(parseRedisUrl('redis://u:secret@h:1')), 'redis://u:***@h:1');
});
