// Dashboard sessions of the file store, in memory for now: the dashboard makes them durable in the
// state directory (CONTRACT 8: they survive a restart).
import type { SessionRecord, SessionStore } from '../types.ts';

export class MemorySessions implements SessionStore {
  private readonly byId = new Map<string, SessionRecord>();

  async put(session: SessionRecord): Promise<void> {
    this.byId.set(session.id, session);
  }

  async get(id: string): Promise<SessionRecord | null> {
    return this.byId.get(id) ?? null;
  }

  async delete(id: string): Promise<void> {
    this.byId.delete(id);
  }

  async deleteForAccount(account: string, keep: string | null): Promise<number> {
    let n = 0;
    for (const [id, s] of this.byId) {
      if (s.account === account && id !== keep) {
        this.byId.delete(id);
        n++;
      }
    }
    return n;
  }
}
