// A parsed list query: what src/query/parse.ts makes of a query string and src/query/execute.ts runs.

export interface QueryPlan {
  /** 1-based page number. */
  readonly page: number;
  /** Items per page, already clamped to MAX_LIMIT. */
  readonly limit: number;
  /** A sort name of the resource definition. */
  readonly sort: string;
  /** Folded, trimmed search text; null when absent or empty. */
  readonly search: string | null;
  /**
   * Equality filters: `param` of a text/slug/enum/boolean filter and its key in the postings index
   * (text: folded value; slug: as given; enum: as given; boolean: 'true' | 'false').
   */
  readonly filters: readonly { readonly param: string; readonly key: string }[];
  /** The numeric interval of a range filter, when one of its parameters is given. */
  readonly range: { readonly param: string; readonly min: number; readonly max: number } | null;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 50;
export const MAX_SEARCH_LENGTH = 200;
