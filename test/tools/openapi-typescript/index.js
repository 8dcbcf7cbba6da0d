// openapi-typescript 7 builds its output with the TypeScript 5 compiler API. The repo's TypeScript is
// 7 (no JS API), so `typescript` imported from openapi-typescript is resolved from this folder, whose
// only dependency is TypeScript 5. A module resolve hook does the redirect: synchronous, in this
// thread, where node has module.registerHooks (22.15, 23.5 and later; module.register() is
// deprecated on Node 26, DEP0205), else the loader thread's module.register (Node 20).
import module from 'node:module';
import { initialize, resolve } from './resolve.js';

if (typeof module.registerHooks === 'function') {
  initialize({ from: import.meta.url });
  module.registerHooks({ resolve });
} else {
  module.register('./resolve.js', import.meta.url, { data: { from: import.meta.url } });
}
const { default: openapiTS, astToString } = await import('openapi-typescript');
export { openapiTS as default, astToString };
