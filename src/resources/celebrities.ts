// Celebrities (SPEC 2.2): `age` from `born` on the serving day, `filmography` from movie casts (CONTRACT 1).
import { arrayOf, bool, int, map, obj, str, strings } from './schema.ts';
import { byTime, recordCopy, timeKey, type LinkContext, type LinkedRecord, type ResourceDefinition, type SourceRecord } from './types.ts';

/** Whole years from a birth date to a day, both yyyymmdd: the date difference with the month-day carried. */
export const ageOn = (born: number, today: number): number => Math.floor((today - born) / 10_000);

function link(c: SourceRecord, ctx: LinkContext): LinkedRecord {
  const films = ctx.referrers('celebrities', c.slug, 'movies');
  // Newest first, ties by the movie's _id: each release date parsed once, not in every comparison.
  const time = films.map(({ record: m }) => timeKey(m.releaseDate) ?? -Infinity);
  const order = films.map((_, i) => i).sort((i, j) => time[j]! - time[i]! || ((films[i]!.record._id as string) < (films[j]!.record._id as string) ? -1 : 1));
  const filmography = order.map((i) => {
    const { record: m, holder } = films[i]!;
    return { title: m.title, slug: m.slug, releaseDate: m.releaseDate, character: holder.character ?? null, role: holder.role ?? null };
  });
  const out = recordCopy(c);
  out.filmography = filmography;
  return out;
}

export const celebrities = {
  name: 'celebrities',
  file: 'celebrities.json',
  source: obj(
    {
      _id: str(),
      name: str(),
      slug: str('slug'),
      profileImage: str('url'),
      occupation: strings,
      nationality: str(),
      netWorth: str(),
      born: str('date'),
      isVerified: bool,
      createdAt: str('timestamp'),
      birthPlace: str(),
      height: str(),
      introduction: str(),
      career: str(),
      socialMedia: map(str('url')),
    },
    ['_id', 'name', 'slug', 'createdAt'],
  ),
  derived: obj({
    age: int(0),
    // title, slug and releaseDate come from the movie, where they are required.
    filmography: arrayOf(
      obj({ title: str(), slug: str('slug'), releaseDate: str('timestamp'), character: str(), role: str() }, ['title', 'slug', 'releaseDate']),
    ),
  }),
  referrers: ['movies'],
  readByLinks: ['name'],
  link,
  late: {
    field: 'age',
    key: (r) => (typeof r.born === 'string' ? Number(r.born.replaceAll('-', '')) : null),
    value: ageOn,
  },
  listFields: ['_id', 'name', 'slug', 'profileImage', 'occupation', 'nationality', 'netWorth', 'born', 'age', 'isVerified', 'createdAt'],
  detailFields: [
    '_id', 'name', 'slug', 'profileImage', 'occupation', 'nationality', 'netWorth', 'born', 'age', 'createdAt',
    'birthPlace', 'height', 'introduction', 'career', 'socialMedia', 'filmography',
  ],
  filters: [
    { kind: 'text', param: 'occupation', get: (r) => r.occupation as readonly string[] },
    { kind: 'text', param: 'nationality', get: (r) => r.nationality as string | null },
  ],
  sorts: [
    ...byTime('createdAt'),
    { name: 'name_asc', type: 'text', dir: 'asc', key: (r) => r.name as string },
    { name: 'name_desc', type: 'text', dir: 'desc', key: (r) => r.name as string },
  ],
  searchText: (r) => r.name as string,
} as const satisfies ResourceDefinition;
