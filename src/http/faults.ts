// Faults on purpose (CONTRACT 11), for client test suites: added latency, a 500 or 503, or a dropped
// connection, for every request or those under a path, at a seeded rate or for the next N requests.
// Off unless asked for: the app's hook is null then, and `serve` needs an explicit --fault.
import { Rng } from '../random.ts';

export interface FaultRule {
  /** Milliseconds added before the answer (or before the drop). */
  readonly latencyMs?: number;
  /** Answer with this status instead: 500 INTERNAL_ERROR, or 503 SERVICE_UNAVAILABLE with Retry-After. */
  readonly status?: 500 | 503;
  /** Close the connection without an answer. */
  readonly drop?: boolean;
  /** Only requests to this path or below it (`/api/v1/movies` also matches `/api/v1/movies/x`), or whose path the RegExp matches. */
  readonly path?: string | RegExp;
  /** The share of matching requests hit, from 0 to 1, drawn from a generator seeded with `seed`: the same requests get the same faults each run. */
  readonly rate?: number;
  /** Seed of `rate` (default 'faults'). */
  readonly seed?: string | number;
  /** Only the next N matching requests (that the rate picks); then the rule is spent. */
  readonly times?: number;
}

/** What happens to one request. */
export interface Fault {
  readonly latencyMs: number;
  readonly status: 500 | 503 | null;
  readonly drop: boolean;
}


interface Armed {
  readonly fault: Fault;
  readonly path: string | RegExp | null;
  readonly rate: number;
  readonly rng: Rng | null;
  left: number;
}

/** A bad rule: says which one and why (startServer throws it; `serve --fault` makes it a usage error). */
export class FaultRuleError extends TypeError {}

function arm(rule: FaultRule, i: number): Armed {
  const bad = (why: string) => new FaultRuleError(`faults[${i}]: ${why}`);
  const known = new Set(['latencyMs', 'status', 'drop', 'path', 'rate', 'seed', 'times']);
  for (const name of Object.keys(rule)) if (!known.has(name)) throw bad(`unknown field '${name}'`);
  const { latencyMs = 0, status = null, drop = false, path = null, rate = 1, seed = 'faults', times = Infinity } = rule;
  if (!Number.isSafeInteger(latencyMs) || latencyMs < 0 || latencyMs > 600_000) throw bad('latencyMs must be an integer from 0 to 600000');
  if (status !== null && status !== 500 && status !== 503) throw bad('status must be 500 or 503');
  if (typeof drop !== 'boolean') throw bad('drop must be true or false');
  if (status !== null && drop) throw bad('status and drop exclude each other');
  if (latencyMs === 0 && status === null && !drop) throw bad('needs latencyMs, status or drop');
  if (path !== null && !(path instanceof RegExp) && (typeof path !== 'string' || !path.startsWith('/'))) throw bad("path must start with '/'");
  if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) throw bad('rate must be a number from 0 to 1');
  if (times !== Infinity && (!Number.isSafeInteger(times) || times < 1)) throw bad('times must be an integer >= 1');
  if (typeof seed !== 'string' && typeof seed !== 'number') throw bad('seed must be a string or a number');
  return { fault: { latencyMs, status, drop }, path, rate, rng: rate < 1 ? new Rng(String(seed)) : null, left: times };
}

function pathMatches(want: string | RegExp | null, path: string): boolean {
  if (want === null) return true;
  if (want instanceof RegExp) return want.test(path);
  return path === want || (path.startsWith(want) && (want.endsWith('/') || path.charCodeAt(want.length) === 47 /* / */));
}

/** The rules in force; the first one that fires decides a request's fault. */
export class Faults {
  private readonly rules: Armed[];
  /** Requests that got a fault so far. */
  injected = 0;

  constructor(rules: readonly FaultRule[]) {
    this.rules = rules.map(arm);
  }

  /** The fault for a request path (as the router sees it), or null. Each matching rule with a rate draws once, in order. */
  match(path: string): Fault | null {
    for (const rule of this.rules) {
      if (rule.left === 0 || !pathMatches(rule.path, path)) continue;
      if (rule.rng !== null && !(rule.rng.next() < rule.rate)) continue;
      rule.left--;
      this.injected++;
      return rule.fault;
    }
    return null;
  }
}

/**
 * `serve --fault SPEC`: comma-separated `status=500|503`, `latency=MS`, `drop`, `path=/p`, `rate=R`,
 * `seed=S`, `times=N`. Throws FaultRuleError naming what is wrong.
 */
export function parseFaultSpec(spec: string): FaultRule {
  const rule: Record<string, unknown> = {};
  const number = (name: string, text: string) => {
    if (!/^\d+(\.\d+)?$/.test(text)) throw new FaultRuleError(`--fault ${spec}: ${name} must be a number, got '${text}'`);
    return Number(text);
  };
  for (const part of spec.split(',')) {
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : part.slice(0, eq);
    const value = eq === -1 ? null : part.slice(eq + 1);
    if (name in rule || (name === 'latency' && 'latencyMs' in rule)) throw new FaultRuleError(`--fault ${spec}: '${name}' given twice`);
    if (name === 'drop' && value === null) rule.drop = true;
    else if (value === null) throw new FaultRuleError(`--fault ${spec}: '${part}' needs a value (or is not known): status=, latency=, drop, path=, rate=, seed=, times=`);
    else if (name === 'status') rule.status = number(name, value);
    else if (name === 'latency') rule.latencyMs = number(name, value);
    else if (name === 'path') rule.path = value;
    else if (name === 'rate') rule.rate = number(name, value);
    else if (name === 'seed') rule.seed = value;
    else if (name === 'times') rule.times = number(name, value);
    else throw new FaultRuleError(`--fault ${spec}: unknown '${name}': status=, latency=, drop, path=, rate=, seed=, times=`);
  }
  try {
    arm(rule as FaultRule, 0);
  } catch (err) {
    throw new FaultRuleError(`--fault ${spec}: ${(err as Error).message.replace(/^faults\[0\]: /, '')}`);
  }
  return rule as FaultRule;
}
