// Structured logging: JSON lines (default) or text, to stderr. Never pass an API key to it.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const satisfies readonly LogLevel[];

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(
  options: { level?: LogLevel; format?: 'json' | 'text'; write?: (line: string) => void } = {},
): Logger {
  const min = LOG_LEVELS.indexOf(options.level ?? 'info');
  const json = (options.format ?? 'json') === 'json';
  const write = options.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (LOG_LEVELS.indexOf(level) < min) return;
    const time = new Date().toISOString();
    if (json) write(JSON.stringify({ time, level, msg, ...fields }));
    else write(`${time} ${level.toUpperCase()} ${msg}${fields ? ' ' + JSON.stringify(fields) : ''}`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

/** For tests and embedding: drops everything. */
export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
