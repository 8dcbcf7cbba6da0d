// Module resolve hook: `typescript` imported from inside openapi-typescript resolves from this folder.
// The same function serves module.registerHooks (synchronous: `next` returns the resolution) and
// module.register (asynchronous: the hook may return what `next` returns, a promise).
let from = '';

export function initialize(data) {
  from = data.from;
}

export function resolve(specifier, context, next) {
  if (specifier === 'typescript' && context.parentURL?.includes('/node_modules/openapi-typescript/')) {
    return next(specifier, { ...context, parentURL: from });
  }
  return next(specifier, context);
}
