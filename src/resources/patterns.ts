// The string rules of the source schemas (`format: 'slug'` and the others), as pattern text: the
// loader tests them, the router and the query parser test slugs, and the schemas publish them verbatim.

export const PATTERNS = {
  slug: '^[a-z0-9]+(-[a-z0-9]+)*$',
  timestamp: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,3})?Z$',
  urlStart: '^https?://[^\\s/]',
} as const;
export const SLUG = new RegExp(PATTERNS.slug);
