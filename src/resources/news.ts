// News articles (SPEC 2.4): `views` is an internal popularity count, sorted on but never served.
import { bool, int, obj, ref, str, strings } from './schema.ts';
import { byTime, type ResourceDefinition } from './types.ts';

export const news = {
  name: 'news',
  file: 'news.json',
  source: obj(
    {
      _id: str(),
      title: str(),
      slug: str('slug'),
      excerpt: str(),
      thumbnail: str('url'),
      author: str(),
      category: str(),
      tags: strings,
      publishDate: str('timestamp'),
      featured: bool,
      celebrity: ref('celebrities'),
      createdAt: str('timestamp'),
      content: str('html'),
      views: int(0),
    },
    ['_id', 'title', 'slug', 'publishDate', 'celebrity'],
  ),
  derived: obj({}),
  link: (n, ctx) => ({ ...n, celebrity: ctx.get('celebrities', n.celebrity as string) }),
  listFields: [
    '_id', 'title', 'slug', 'excerpt', 'thumbnail', 'author', 'category', 'tags', 'publishDate', 'featured',
    { name: 'celebrity', from: 'celebrities', pick: ['name', 'slug'] }, 'createdAt',
  ],
  detailFields: [
    '_id', 'title', 'slug', 'excerpt', 'thumbnail', 'author', 'category', 'tags', 'publishDate', 'featured',
    { name: 'celebrity', from: 'celebrities', pick: ['name', 'slug', 'nationality'] }, 'content',
  ],
  filters: [
    { kind: 'text', param: 'category', get: (r) => r.category as string | null },
    { kind: 'slug', param: 'celebrity', get: (r) => (r.celebrity as { slug: string }).slug, embed: 'celebrity' },
    { kind: 'boolean', param: 'featured', get: (r) => r.featured as boolean | null },
  ],
  sorts: [
    ...byTime('publishDate'),
    { name: 'popular', type: 'number', dir: 'desc', key: (r) => r.views as number | null, kept: true },
  ],
  searchText: (r) => r.title as string,
} as const satisfies ResourceDefinition;
