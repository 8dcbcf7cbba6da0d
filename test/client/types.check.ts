// Compile-time checks (npm run typecheck) that the client types follow the definitions and CONTRACT 1:
// each line fails to compile if a derived type drifts from what the server sends.
import type { Detail, ListItem, ListParams } from '../../src/client/types.ts';
type Eq<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
const check = <T extends true>() => undefined as unknown as T;
declare const r: Detail<'reviews'>;
declare const c: Detail<'celebrities'>;
declare const o: ListItem<'outfits'>;
declare const m: Detail<'movies'>;
declare const p: ListParams<'reviews'>;
declare const pm: ListParams<'movies'>;
check<Eq<typeof r.movieTitle, string>>();
check<Eq<typeof r.scores, { criticsScore: number | null; audienceScore: number | null; externalRating: number | null; externalPercentScore: number | null } | null>>();
check<Eq<typeof r.movieDetails.releaseYear, number>>();
check<Eq<typeof r.movieDetails.runtime, number | null>>();
check<Eq<typeof r.author, { name: string; bio: string | null; credentials: string | null } | null>>();
check<Eq<typeof r.poster, string | null>>();
check<Eq<typeof r.pros, string[]>>();
check<Eq<typeof c.filmography, { title: string; slug: string; releaseDate: string; character: string | null; role: string | null }[]>>();
check<Eq<typeof c.socialMedia, Record<string, string> | null>>();
check<Eq<typeof c.age, number | null>>();
check<Eq<typeof o.celebrity, { name: string; slug: string; profileImage: string | null }>>();
check<Eq<typeof m.status, 'upcoming' | 'released' | 'in-production'>>();
check<Eq<typeof m.cast, { name: string; character: string | null; role: string | null }[]>>();
check<Eq<typeof m.ticketLinks, { platform: string; url: string; available: boolean | null }[]>>();
check<Eq<typeof p.sort, 'latest' | 'oldest' | 'rating_high' | 'rating_low' | undefined>>();
check<Eq<typeof p.minRating, number | string | undefined>>();
check<Eq<typeof pm.status, 'upcoming' | 'released' | 'in-production' | undefined>>();
check<Eq<keyof typeof r, '_id' | 'title' | 'slug' | 'movieTitle' | 'poster' | 'rating' | 'excerpt' | 'author' | 'publishDate' | 'scores' | 'verdict' | 'stats' | 'content' | 'movieDetails' | 'pros' | 'cons'>>();
