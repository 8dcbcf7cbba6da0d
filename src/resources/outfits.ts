// Outfits (SPEC 2.3): `celebrity` is a slug in the data file and an embedded object in responses.
import { bool, int, obj, ref, str, strings, urls } from './schema.ts';
import { byTime, type ResourceDefinition } from './types.ts';

export const outfits = {
  name: 'outfits',
  file: 'outfits.json',
  source: obj(
    {
      _id: str(),
      title: str(),
      slug: str('slug'),
      celebrity: ref('celebrities'),
      images: urls,
      event: str(),
      designer: str(),
      brand: str(),
      category: str(),
      price: str(),
      purchaseLink: str('url'),
      tags: strings,
      likesCount: int(0),
      createdAt: str('timestamp'),
      color: str(),
      isFeatured: bool,
      description: str(),
    },
    ['_id', 'title', 'slug', 'celebrity', 'createdAt'],
  ),
  derived: obj({}),
  link: (o, ctx) => ({ ...o, celebrity: ctx.get('celebrities', o.celebrity as string) }),
  listFields: [
    '_id', 'title', 'slug', { name: 'celebrity', from: 'celebrities', pick: ['name', 'slug', 'profileImage'] },
    'images', 'event', 'designer', 'brand', 'category', 'price', 'purchaseLink', 'tags', 'likesCount', 'createdAt',
    'color', 'isFeatured',
  ],
  detailFields: [
    '_id', 'title', 'slug', { name: 'celebrity', from: 'celebrities', pick: ['name', 'slug', 'nationality'] },
    'images', 'event', 'designer', 'brand', 'category', 'price', 'purchaseLink', 'tags', 'likesCount', 'createdAt',
    'description',
  ],
  filters: [
    { kind: 'slug', param: 'celebrity', get: (r) => (r.celebrity as { slug: string }).slug, embed: 'celebrity' },
    { kind: 'text', param: 'category', get: (r) => r.category as string | null },
    { kind: 'text', param: 'brand', get: (r) => r.brand as string | null },
  ],
  sorts: [
    ...byTime('createdAt'),
    { name: 'popular', type: 'number', dir: 'desc', key: (r) => r.likesCount as number | null },
    { name: 'title_asc', type: 'text', dir: 'asc', key: (r) => r.title as string },
  ],
  searchText: (r) => r.title as string,
} as const satisfies ResourceDefinition;
