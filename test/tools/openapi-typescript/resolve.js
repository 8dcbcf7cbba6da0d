// Module resolve hook: `typescript` imported from inside openapi-typescript resolves from this folder.
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
