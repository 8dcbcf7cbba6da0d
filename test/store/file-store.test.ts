// The store contract (store.case.ts) against the file store: in memory, and on a state directory
// with a CLI command's store beside the server's.
import { after } from 'node:test';
import { openFileStore } from '../../src/store/file/file-store.ts';
import { FAST_SCRYPT, tempState } from '../helpers/state.ts';
import { storeSuite } from './store.case.ts';

// No peer: a memory store is one process's, there is no other instance to propagate from.
storeSuite('memory', { open: () => openFileStore({ state: 'memory', role: 'server' }) });

const dirs = new WeakMap<object, string>();
storeSuite('file', {
  async open() {
    const state = await tempState(after);
    const store = await openFileStore({ state, role: 'server', scrypt: FAST_SCRYPT, watchIntervalMs: 200 });
    dirs.set(store, state);
    return store;
  },
  peer: (store) => openFileStore({ state: dirs.get(store)!, role: 'command', scrypt: FAST_SCRYPT }),
});
