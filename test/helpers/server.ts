// Starts the service in-process on 127.0.0.1, port 0, with state in memory, for black-box HTTP tests.
import { BUNDLED_DATA } from '../../src/config.ts';
import type { DataInput } from '../../src/data/load.ts';
import { assertMatchesDocument } from './openapi-validator.ts';
import { startService, type Service, type ServiceOptions } from '../../src/service.ts';

export interface TestServer {
  readonly service: Service;
  readonly url: string;
  /** GET (or another method) with an optional key; the body parsed as JSON when there is one. */
  request(path: string, options?: { key?: string; method?: string; headers?: Record<string, string> }): Promise<TestResponse>;
  /** Creates an account and returns its key. */
  account(plan?: string, email?: string): Promise<string>;
  close(): Promise<void>;
}

export interface TestResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly body: any;
}

let accounts = 0;

export async function startTestServer(options: Partial<ServiceOptions> & { data?: DataInput } = {}): Promise<TestServer> {
  const service = await startService({ data: BUNDLED_DATA, state: 'memory', tls: false, port: 0, ...options });
  const url = service.listeners[0]!.url;
  return {
    service,
    url,
    async request(path, { key, method = 'GET', headers = {} } = {}) {
      const res = await fetch(url + path, { method, headers: { ...(key === undefined ? {} : { 'x-api-key': key }), ...headers } });
      const text = await res.text();
      let body: unknown = undefined;
      if (text.length > 0) {
        body = JSON.parse(text);
        // Every response a black-box test sees must match the published OpenAPI document.
        assertMatchesDocument(path, res.status, body, method);
      }
      return { status: res.status, headers: res.headers, text, body };
    },
    async account(plan = 'enterprise', email = `user${++accounts}@example.com`) {
      return (await service.gate.accounts.create({ email, plan, password: 'correct horse battery' })).key;
    },
    close: () => service.close(),
  };
}
