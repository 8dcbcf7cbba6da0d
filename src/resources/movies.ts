// Movies (SPEC 2.5): a cast entry names a celebrity of the data set by slug, or anyone else by name.
import { arrayOf, bool, int, obj, ref, str, strings } from './schema.ts';
import { byTime, timeKey, type LinkContext, type LinkedRecord, type ResourceDefinition, type SourceRecord } from './types.ts';

export const MOVIE_STATUSES = ['upcoming', 'released', 'in-production'] as const;

function link(m: SourceRecord, ctx: LinkContext): LinkedRecord {
  const cast = ((m.cast ?? []) as readonly Record<string, unknown>[]).map((c) => ({
    name: typeof c.celebrity === 'string' ? ctx.get('celebrities', c.celebrity)!.name : (c.name ?? null),
    character: c.character ?? null,
    role: c.role ?? null,
  }));
  return { ...m, cast };
}

export const movies = {
  name: 'movies',
  file: 'movies.json',
  source: obj(
    {
      _id: str(),
      title: str(),
      slug: str('slug'),
      releaseDate: str('timestamp'),
      poster: str('url'),
      genre: strings,
      director: str(),
      status: { type: 'string', enum: MOVIE_STATUSES },
      synopsis: str(),
      anticipationScore: int(0),
      language: strings,
      featured: bool,
      createdAt: str('timestamp'),
      backdrop: str('url'),
      writers: strings,
      cast: arrayOf(obj({ celebrity: ref('celebrities'), name: str(), character: str(), role: str() }, [], ['celebrity', 'name'])),
      trailer: str('url'),
      ticketLinks: arrayOf(obj({ platform: str(), url: str('url'), available: bool }, ['platform', 'url'])),
      budget: int(0),
      duration: int(1),
      filmBoardRating: str(),
    },
    ['_id', 'title', 'slug', 'releaseDate', 'createdAt', 'status'],
  ),
  // A cast member's name comes from the celebrity or the entry itself; one of the two is required.
  derived: obj({ cast: arrayOf(obj({ name: str(), character: str(), role: str() }, ['name'])) }),
  // A celebrity's filmography (through ctx.referrers) and a review's movieTitle, poster and movieDetails.
  readByLinks: ['_id', 'title', 'releaseDate', 'poster', 'director', 'genre', 'duration'],
  link,
  listFields: [
    '_id', 'title', 'slug', 'releaseDate', 'poster', 'genre', 'director', 'status', 'synopsis', 'anticipationScore',
    'language', 'featured', 'createdAt',
  ],
  detailFields: [
    '_id', 'title', 'slug', 'releaseDate', 'poster', 'genre', 'director', 'status', 'synopsis', 'anticipationScore',
    'backdrop', 'writers', 'cast', 'trailer', 'ticketLinks', 'budget', 'duration', 'filmBoardRating',
  ],
  filters: [
    { kind: 'text', param: 'genre', get: (r) => r.genre as readonly string[] },
    { kind: 'enum', param: 'status', values: MOVIE_STATUSES, get: (r) => r.status as string },
    { kind: 'boolean', param: 'featured', get: (r) => r.featured as boolean | null },
  ],
  sorts: [
    ...byTime('createdAt'),
    { name: 'release_asc', type: 'number', dir: 'asc', key: (r) => timeKey(r.releaseDate) },
    { name: 'release_desc', type: 'number', dir: 'desc', key: (r) => timeKey(r.releaseDate) },
    { name: 'title_asc', type: 'text', dir: 'asc', key: (r) => r.title as string },
  ],
  searchText: (r) => r.title as string,
} as const satisfies ResourceDefinition;
