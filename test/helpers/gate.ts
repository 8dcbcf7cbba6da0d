// A gate over a file (or memory) store, as the server opens it, for unit tests: its admit is
// synchronous (the counters are local), so tests can interleave admits and settles step by step.
import { openGate, type Admission, type Gate } from '../../src/quota/gate.ts';
import { CalendarCache } from '../../src/quota/month.ts';
import { resolveQuotas, type Plan, type Quota } from '../../src/access/plans.ts';
import { createUsageService, type UsageService } from '../../src/quota/usage-service.ts';
import { openFileStore, type FileStoreOptions } from '../../src/store/file/file-store.ts';
import { FAST_SCRYPT } from './state.ts';

export interface FileGate extends Gate {
  admit(apiKey: string | undefined): Admission;
}

export type FileGateOptions = Omit<FileStoreOptions, 'role'> & { readonly plans?: Partial<Record<Plan, Quota>> };

export async function openFileGate(options: FileGateOptions): Promise<FileGate> {
  const { plans, ...storeOptions } = options;
  const store = await openFileStore({ scrypt: FAST_SCRYPT, ...storeOptions, role: 'server' });
  const gate = openGate({ store, ...(options.clock ? { clock: options.clock } : {}), ...(plans ? { plans } : {}) });
  return {
    ...gate,
    admit(apiKey) {
      const a = gate.admit(apiKey);
      if (a instanceof Promise) throw new Error('a file store admits synchronously');
      return a;
    },
  };
}

/** Usage as the files say, through the store a CLI command opens (replayed without repair, never written). */
export async function readUsageFiles(state: string, options: { clock: () => number; plans?: Partial<Record<Plan, Quota>> }): Promise<UsageService> {
  const store = await openFileStore({ state, role: 'command' });
  return createUsageService({ store, quotas: resolveQuotas(options.plans), calendar: new CalendarCache(options.clock()), clock: options.clock });
}

/** One of the store's /metrics values by name (without the prefix), or undefined. */
export function storeMetric(gate: Gate, name: string): number | undefined {
  return gate.status().metrics.find((m) => m.name === `celebrity_api_usage_log_${name}`)?.value;
}
