// openapi-typescript 7 builds its output with the TypeScript 5 compiler API. The repo's TypeScript is
// 7 (no JS API), so `typescript` imported from openapi-typescript is resolved from this folder, whose
// only dependency is TypeScript 5. A module resolve hook (node:module register) does the redirect.
import { register } from 'node:module';

register('./resolve.js', import.meta.url, { data: { from: import.meta.url } });
const { default: openapiTS, astToString } = await import('openapi-typescript');
export { openapiTS as default, astToString };
