// Structured logging: JSON lines (default) or text, to stderr. Never pass an API key to it.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const satisfies readonly LogLevel[];

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Whether a line of `level` would be written; absent means yes (a logger from elsewhere). */
  enabled?(level: LogLevel): boolean;
}

export function createLogger(
  options: { level?: LogLevel; format?: 'json' | 'text'; write?: (line: string, level: LogLevel) => void } = {},
): Logger {
  const min = LOG_LEVELS.indexOf(options.level ?? 'info');
  const json = (options.format ?? 'json') === 'json';
  const write = options.write ?? ((line: string) => process.stderr.write(line + '\n'));
  // An access line per request at info: the time's text is made once per millisecond, and the line
  // without copying the fields into a new object (a field named like the three first ones: as before).
  let lastMs = NaN;
  let lastTime = '';
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (LOG_LEVELS.indexOf(level) < min) return;
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      lastTime = new Date(now).toISOString();
    }
    const time = lastTime;
    if (json && (fields === undefined || !('time' in fields || 'level' in fields || 'msg' in fields))) {
      const rest = fields === undefined ? '{}' : JSON.stringify(fields);
      write(`{"time":"${time}","level":"${level}","msg":${JSON.stringify(msg)}${rest === '{}' ? '}' : ',' + rest.slice(1)}`, level);
    } else if (json) write(JSON.stringify({ time, level, msg, ...fields }), level);
    else write(`${time} ${level.toUpperCase()} ${msg}${fields ? ' ' + JSON.stringify(fields) : ''}`, level);
  };
  return {
    enabled: (level) => LOG_LEVELS.indexOf(level) >= min,
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

/** For tests and embedding: drops everything. */
export const silentLogger: Logger = { enabled: () => false, debug() {}, info() {}, warn() {}, error() {} };

/**
 * Collects log lines and hands them to `sink` in one chunk at most every `intervalMs`, or once
 * `maxBytes` wait: an access line per request then costs a string push, not a write(2) (stderr to a
 * file or pipe is synchronous on Linux). Warnings and errors go out at once, after what waits, so
 * the order holds. Call `flush()` before exiting; a crash loses at most one interval of info lines.
 */
export function batchedWriter(sink: (chunk: string) => void, intervalMs = 100, maxBytes = 64 * 1024) {
  let pending: string[] = [];
  let bytes = 0;
  let timer: NodeJS.Timeout | null = null;
  const flush = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (pending.length === 0) return;
    const chunk = pending.join('');
    pending = [];
    bytes = 0;
    sink(chunk);
  };
  const write = (line: string, level: LogLevel): void => {
    pending.push(line + '\n');
    bytes += line.length + 1;
    if (level === 'warn' || level === 'error' || bytes >= maxBytes) flush();
    else if (timer === null) timer = setTimeout(flush, intervalMs).unref();
  };
  return { write, flush };
}
