// Every collection the API serves, in the order of SPEC section 4. Adding one is a new file and a line here.
import { celebrities } from './celebrities.ts';
import { movies } from './movies.ts';
import { news } from './news.ts';
import { outfits } from './outfits.ts';
import { reviews } from './reviews.ts';
import { COLLECTIONS, type CollectionName, type ResourceDefinition } from './types.ts';

/** The definitions with their exact types, from which the typed client derives its types (src/client/types.ts). */
export const DEFINITIONS = { celebrities, outfits, news, movies, reviews } as const satisfies Record<CollectionName, ResourceDefinition>;
export const RESOURCES: Readonly<Record<CollectionName, ResourceDefinition>> = DEFINITIONS;
export const RESOURCE_LIST: readonly ResourceDefinition[] = COLLECTIONS.map((name) => RESOURCES[name]);
export { COLLECTIONS, type CollectionName, type ResourceDefinition };
