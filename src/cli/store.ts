// The store a command works on (CONTRACT 6 and 9): the state directory's files, opened beside a
// server that may be running on them, and closed when the command ends.
import { openFileStore } from '../store/file/file-store.ts';
import type { Store } from '../store/types.ts';
import { stateDir, type Io } from './io.ts';

export async function withStore<T>(flags: { readonly state?: string | undefined }, io: Io, body: (store: Store) => Promise<T>): Promise<T> {
  const store = await openFileStore({ state: stateDir(flags.state, io), role: 'command' });
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}
