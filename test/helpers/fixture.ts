// A tiny, hand-written valid data set that tests change one field at a time.
import type { CollectionName } from '../../src/resources/types.ts';

export type Fixture = Record<CollectionName, Record<string, unknown>[]>;

export function fixture(): Fixture {
  return {
    celebrities: [
      {
        _id: 'c1', slug: 'zoe-martin', name: 'Zoë Martín', profileImage: 'https://images.example.com/zoe.jpg',
        occupation: ['Actor', 'Singer'], nationality: 'French', netWorth: '$10 million', born: '1990-03-15',
        isVerified: true, createdAt: '2025-01-01T00:00:00.000Z', birthPlace: 'Lyon, France', height: '1.70 m',
        introduction: 'Intro', career: 'Career', socialMedia: { instagram: 'https://instagram.example/zoe' },
      },
      { _id: 'c2', slug: 'bjorn-berg', name: 'Björn Berg', occupation: ['Director'], nationality: 'Swedish', born: '1980-12-01', createdAt: '2025-02-01T00:00:00Z' },
    ],
    outfits: [
      { _id: 'o1', slug: 'zoe-gala-gown', title: 'Gala Gown', celebrity: 'zoe-martin', brand: 'Maison Verrel', category: 'Red Carpet', likesCount: 10, createdAt: '2025-03-01T00:00:00.000Z', images: ['https://images.example.com/o1.jpg'] },
    ],
    news: [
      { _id: 'n1', slug: 'zoe-wins', title: 'Zoë wins an award', celebrity: 'zoe-martin', category: 'Awards', featured: true, views: 5, publishDate: '2025-04-01T10:00:00.000Z', createdAt: '2025-04-01T09:00:00.000Z', content: '<p>Yes.</p>' },
    ],
    movies: [
      {
        _id: 'm1', slug: 'night-train', title: 'Night Train', releaseDate: '2024-05-01T00:00:00.000Z', createdAt: '2024-01-01T00:00:00.000Z',
        status: 'released', genre: ['Drama'], director: 'Björn Berg', duration: 120, poster: 'https://images.example.com/m1.jpg',
        cast: [{ celebrity: 'zoe-martin', character: 'Ada', role: 'Lead' }, { name: 'Sam Extra', character: 'Guard', role: 'Cameo' }],
      },
      {
        _id: 'm2', slug: 'day-boat', title: 'Day Boat', releaseDate: '2026-05-01T00:00:00.000Z', createdAt: '2025-01-01T00:00:00.000Z',
        status: 'released', cast: [{ celebrity: 'zoe-martin', character: 'Eve', role: 'Supporting' }],
      },
    ],
    reviews: [
      {
        _id: 'r1', slug: 'night-train-review', title: 'A slow ride', movie: 'night-train', rating: 7.5, publishDate: '2024-06-01T00:00:00.000Z',
        author: { name: 'Ann Critic', bio: 'Writes', credentials: 'Critic' }, scores: { criticsScore: 80 },
      },
    ],
  };
}
