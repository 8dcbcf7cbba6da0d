// The Lua scripts of the Redis store. Each runs atomically on the server, so a check and the write it
// allows are one step whatever the other instances do. Sent as EVALSHA; node-redis resends a script
// as EVAL when the server answers NOSCRIPT (after SCRIPT FLUSH or a restart), which loads it again.
import { CHANGES_CHANNEL, SHARDED_CHANGES_CHANNEL } from './keys.ts';

/** What node-redis's defineScript takes: the script, and how a call's arguments become the command. */
export interface ScriptConfig {
  readonly SCRIPT: string;
  readonly NUMBER_OF_KEYS?: number;
  parseCommand(parser: { push(...args: string[]): unknown; pushKeys(keys: string[]): unknown }, keys: readonly string[], args: readonly string[]): void;
  readonly transformReply: (reply: unknown) => unknown;
}

/** Every script takes (keys, args): the number of keys travels with the call. */
function script(source: string): ScriptConfig {
  return {
    SCRIPT: source,
    parseCommand(parser, keys, args) {
      parser.push(String(keys.length));
      parser.pushKeys(keys as string[]); // node-redis only reads it
      parser.push(...args);
    },
    transformReply: (reply) => reply,
  };
}

// Month hash (keys.ts monthKey): u = units taken, t = last use (ms), s:<day> / r:<day> = the day's
// successes and rejections. The TTL is set when the hash is (re)created, never pushed forward.
const KEEP = `if redis.call('PTTL', k) < 0 then redis.call('PEXPIRE', k, ttl) end`;

/**
 * reserve: KEYS month; ARGV total (-1: unlimited), day, now (ms), ttl (ms).
 * Takes one unit if the month has one left (200s and requests in flight both hold one), and counts
 * it as the day's success at once, so a 200 needs no second round trip; else counts the day's
 * rejection. Returns the units taken after it, or -1 when refused. Never counts, then refunds.
 */
const RESERVE = script(`
local k, total, day, now, ttl = KEYS[1], tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4]
local h = redis.call('HMGET', k, 'u', 't')
local used = tonumber(h[1]) or 0
if tonumber(now) > (tonumber(h[2]) or 0) then redis.call('HSET', k, 't', now) end
local result = -1
if total < 0 or used < total then
  result = redis.call('HINCRBY', k, 'u', 1)
  redis.call('HINCRBY', k, 's:' .. day, 1)
else
  redis.call('HINCRBY', k, 'r:' .. day, 1)
end
${KEEP}
return result`);

/**
 * giveBack: KEYS month; ARGV day, ttl, rejected. A reservation that did not end in 200: the unit returns
 * to the month, and the day's success becomes a rejection ('1') or nothing ('0': a 304). Never below
 * zero (a `set` may have lowered the count).
 */
const GIVE_BACK = script(`
local k, day, ttl = KEYS[1], ARGV[1], ARGV[2]
local h = redis.call('HMGET', k, 'u', 's:' .. day)
if (tonumber(h[1]) or 0) > 0 then redis.call('HINCRBY', k, 'u', -1) end
if (tonumber(h[2]) or 0) > 0 then redis.call('HINCRBY', k, 's:' .. day, -1) end
if ARGV[3] == '1' then redis.call('HINCRBY', k, 'r:' .. day, 1) end
${KEEP}
return 1`);

/** setUsed: KEYS month; ARGV used, ttl. The month's count at a value (test suites, UsageService.set). */
const SET_USED = script(`
local k, ttl = KEYS[1], ARGV[2]
redis.call('HSET', k, 'u', ARGV[1])
${KEEP}
return 1`);

/** restoreMonth: KEYS month; ARGV used, last use (0: none), ttl, then day, success, rejected... (state import). */
const RESTORE_MONTH = script(`
local k, ttl = KEYS[1], ARGV[3]
redis.call('DEL', k)
redis.call('HSET', k, 'u', ARGV[1])
if tonumber(ARGV[2]) > 0 then redis.call('HSET', k, 't', ARGV[2]) end
for i = 4, #ARGV, 3 do
  redis.call('HSET', k, 's:' .. ARGV[i], ARGV[i + 1], 'r:' .. ARGV[i], ARGV[i + 2])
end
redis.call('PEXPIRE', k, ttl)
return 1`);

// Account scripts: KEYS records, emails, changes, version, epoch (keys.ts ACCOUNT_KEY_LIST). Every change
// bumps the version, records it against the account in the change log and publishes it, in one step;
// a version that starts again at 1 (or a store from before the epoch) gets a new epoch.
// Published with PUBLISH (any Redis) or, on a cluster, SPUBLISH to the hash-tagged channel.
const BUMP = `
local function bump(ids)
  local v = redis.call('INCR', KEYS[4])
  if v == 1 or redis.call('EXISTS', KEYS[5]) == 0 then
    local t = redis.call('TIME')
    redis.call('SET', KEYS[5], t[1] .. '.' .. t[2])
  end
  for _, id in ipairs(ids) do redis.call('ZADD', KEYS[3], v, id) end
  redis.call(PUBLISH_COMMAND, PUBLISH_CHANNEL, v)
  return v
end`;

/**
 * createAccounts: ARGV id, email, record JSON, repeated. All or nothing: if an email (or an id) is
 * taken, nothing is written and that email is returned; else the new version.
 */
const CREATE_ACCOUNTS = script(`${BUMP}
local ids = {}
for i = 1, #ARGV, 3 do
  if redis.call('HEXISTS', KEYS[2], ARGV[i + 1]) == 1 or redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then return ARGV[i + 1] end
  ids[#ids + 1] = ARGV[i]
end
for i = 1, #ARGV, 3 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2])
  redis.call('HSET', KEYS[2], ARGV[i + 1], ARGV[i])
end
return bump(ids)`);

/**
 * updateAccount: ARGV id, the record JSON as read, the new JSON. Optimistic: writes only if the record
 * is still exactly as read (else 0, and the caller reads and applies its change again).
 */
const UPDATE_ACCOUNT = script(`${BUMP}
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return bump({ARGV[1]})`);

/**
 * renameAccount: ARGV id, the record JSON as read, the new JSON, old email, new email. Like
 * updateAccount, and moves the email index in the same step: -1 when the new email is taken.
 */
const RENAME_ACCOUNT = script(`${BUMP}
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[4] ~= ARGV[5] then
  if redis.call('HEXISTS', KEYS[2], ARGV[5]) == 1 then return -1 end
  redis.call('HDEL', KEYS[2], ARGV[4])
  redis.call('HSET', KEYS[2], ARGV[5], ARGV[1])
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return bump({ARGV[1]})`);

/** clearAccounts: removes every account (state import --force); replicas learn it as deletions. */
const CLEAR_ACCOUNTS = script(`${BUMP}
local ids = redis.call('HKEYS', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[2])
return bump(ids)`);

/**
 * syncAccounts: ARGV since (a version), the epoch it counts in ('' if none was seen). Returns {version,
 * full, epoch, id, record JSON or '', ...} for every account changed after `since`. full = 1 when
 * everything is returned: since was 0, the server's version is behind it (Redis lost writes: a restart
 * without persistence, a promoted replica that lagged) or counts in another epoch (a flushed Redis
 * that has since reached that version again), so the replica takes the node's state (replica.ts).
 */
const SYNC_ACCOUNTS = script(`
local since = tonumber(ARGV[1])
local version = tonumber(redis.call('GET', KEYS[4]) or '0')
local epoch = redis.call('GET', KEYS[5]) or ''
local full = 0
if since == 0 or since > version or (ARGV[2] ~= '' and ARGV[2] ~= epoch) then since = 0; full = 1 end
local out = {version, full, epoch}
local changed = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. since, '+inf')
for _, id in ipairs(changed) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', KEYS[1], id) or ''
end
return out`);

// Throttle counters (keys.ts throttleKey): a hash of n, the count, and until, the end of its window
// on the caller's clock (an injected one in tests); the TTL only lets Redis forget old counters.
const COUNTER = `
local function live(k, now)
  local h = redis.call('HMGET', k, 'n', 'until')
  if h[2] and tonumber(h[2]) > now then return tonumber(h[1]) end
  return nil
end
local function add(k, now, window)
  if live(k, now) then return redis.call('HINCRBY', k, 'n', 1) end
  redis.call('HSET', k, 'n', 1, 'until', now + window)
  redis.call('PEXPIRE', k, window)
  return 1
end`;

/** throttleHit: KEYS counter; ARGV window (ms), now (ms). Adds one; returns the new count. */
const THROTTLE_HIT = script(`${COUNTER}
return add(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[1]))`);

/**
 * throttleReserve: KEYS address, account, pair; ARGV address limit, account limit, window (ms), now (ms).
 * One password check, counted before it runs (ThrottleStore.reserve): 0 when refused, nothing
 * counted; else 1, and all three counters have one more.
 */
const THROTTLE_RESERVE = script(`${COUNTER}
local window, now = tonumber(ARGV[3]), tonumber(ARGV[4])
if (live(KEYS[1], now) or 0) >= tonumber(ARGV[1]) then return 0 end
if (live(KEYS[2], now) or 0) >= tonumber(ARGV[2]) and (live(KEYS[3], now) or 0) > 0 then return 0 end
for i = 1, 3 do add(KEYS[i], now, window) end
return 1`);

/** throttleRelease: KEYS address, account, pair; ARGV now (ms). A reserved check given back (ThrottleStore.release). */
const THROTTLE_RELEASE = script(`${COUNTER}
local now = tonumber(ARGV[1])
for i = 1, 2 do
  if (live(KEYS[i], now) or 0) > 0 then redis.call('HINCRBY', KEYS[i], 'n', -1) end
end
redis.call('DEL', KEYS[3])
return 1`);

/** The scripts as written; the account ones need their channel (scriptsFor). */
const SCRIPTS = {
  reserve: RESERVE,
  giveBack: GIVE_BACK,
  setUsed: SET_USED,
  restoreMonth: RESTORE_MONTH,
  createAccounts: CREATE_ACCOUNTS,
  updateAccount: UPDATE_ACCOUNT,
  renameAccount: RENAME_ACCOUNT,
  clearAccounts: CLEAR_ACCOUNTS,
  syncAccounts: SYNC_ACCOUNTS,
  throttleHit: THROTTLE_HIT,
  throttleReserve: THROTTLE_RESERVE,
  throttleRelease: THROTTLE_RELEASE,
} as const;

export type ScriptName = keyof typeof SCRIPTS;

/** The scripts with the change channel of the deployment: sharded on a cluster, plain elsewhere. */
export function scriptsFor(sharded: boolean): Record<ScriptName, ScriptConfig> {
  const publish = sharded ? `local PUBLISH_COMMAND, PUBLISH_CHANNEL = 'SPUBLISH', '${SHARDED_CHANGES_CHANNEL}'` : `local PUBLISH_COMMAND, PUBLISH_CHANNEL = 'PUBLISH', '${CHANGES_CHANNEL}'`;
  const out = {} as Record<ScriptName, ScriptConfig>;
  for (const [name, s] of Object.entries(SCRIPTS) as [ScriptName, ScriptConfig][]) {
    out[name] = s.SCRIPT.includes('PUBLISH_COMMAND') ? { ...s, SCRIPT: `${publish}\n${s.SCRIPT}` } : s;
  }
  return out;
}
