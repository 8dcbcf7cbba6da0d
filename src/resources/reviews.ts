// Reviews (SPEC 2.6): `movieTitle`, `poster` and `movieDetails` come from the reviewed movie.
import { bool, int, num, obj, ref, str, strings } from './schema.ts';
import { byTime, recordCopy, type LinkContext, type LinkedRecord, type ResourceDefinition, type SourceRecord } from './types.ts';

function link(r: SourceRecord, ctx: LinkContext): LinkedRecord {
  const m = ctx.get('movies', r.movie as string)!;
  const out = recordCopy(r);
  out.movieTitle = m.title;
  out.poster = m.poster ?? null;
  out.movieDetails = {
    releaseYear: new Date(m.releaseDate as string).getUTCFullYear(),
    director: m.director ?? null,
    genre: m.genre ?? [],
    runtime: m.duration ?? null,
  };
  return out;
}

export const reviews = {
  name: 'reviews',
  file: 'reviews.json',
  source: obj(
    {
      _id: str(),
      title: str(),
      slug: str('slug'),
      movie: ref('movies'),
      rating: num(0, 10),
      excerpt: str(),
      author: obj({ name: str(), bio: str(), credentials: str() }, ['name']),
      publishDate: str('timestamp'),
      scores: obj({ criticsScore: int(0, 100), audienceScore: int(0, 100), externalRating: num(0, 10), externalPercentScore: int(0, 100) }),
      verdict: str(),
      stats: obj({ views: int(0), likes: int(0) }),
      featured: bool,
      content: str('html'),
      pros: strings,
      cons: strings,
    },
    ['_id', 'title', 'slug', 'movie', 'rating', 'publishDate'],
  ),
  // The reviewed movie is a required reference, so its title, its release year and the details
  // object always exist; poster, director and runtime are optional in the movie.
  derived: obj(
    {
      movieTitle: str(),
      poster: str('url'),
      movieDetails: obj({ releaseYear: int(), director: str(), genre: strings, runtime: int(1) }, ['releaseYear']),
    },
    ['movieTitle', 'movieDetails'],
  ),
  link,
  listFields: [
    '_id', 'title', 'slug', 'movieTitle', 'poster', 'rating', 'excerpt', { name: 'author', pick: ['name', 'credentials'] },
    'publishDate', 'scores', 'verdict', 'stats', 'featured',
  ],
  detailFields: [
    '_id', 'title', 'slug', 'movieTitle', 'poster', 'rating', 'excerpt', { name: 'author', pick: ['name', 'bio', 'credentials'] },
    'publishDate', 'scores', 'verdict', 'stats', 'content', 'movieDetails', 'pros', 'cons',
  ],
  filters: [
    { kind: 'range', minParam: 'minRating', maxParam: 'maxRating', lowest: 0, highest: 10, get: (r) => r.rating as number },
    { kind: 'boolean', param: 'featured', get: (r) => r.featured as boolean | null },
  ],
  sorts: [
    ...byTime('publishDate'),
    { name: 'rating_high', type: 'number', dir: 'desc', key: (r) => r.rating as number },
    { name: 'rating_low', type: 'number', dir: 'asc', key: (r) => r.rating as number },
  ],
  searchText: (r) => r.movieTitle as string,
} as const satisfies ResourceDefinition;
