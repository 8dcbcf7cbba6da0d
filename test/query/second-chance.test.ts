// The eviction hand of the answer caches (src/query/second-chance.ts): entries not used since it last
// passed go first, oldest first; a used one loses its flag and is passed over; the hand goes on from
// where it stopped, meets entries set since, skips deleted ones, and rounds again from the oldest.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SecondChance } from '../../src/query/second-chance.ts';

const mapOf = (...names: string[]) => new Map(names.map((n) => [n, { used: false }]));
/** Takes the next victim out of the map, as a cache does; its key. */
const evict = (map: Map<string, { used: boolean }>, hand: SecondChance<string, { used: boolean }>) => {
  const victim = hand.next();
  if (victim === undefined) return undefined;
  map.delete(victim[0]);
  return victim[0];
};

test('SecondChance: none used -> oldest first; an empty map -> undefined', () => {
  const map = mapOf('a', 'b', 'c');
  const hand = new SecondChance(map);
  assert.deepEqual([evict(map, hand), evict(map, hand), evict(map, hand), evict(map, hand)], ['a', 'b', 'c', undefined]);
});

test('SecondChance: a used entry is passed over once (its flag cleared), then goes when the hand comes round again unused', () => {
  const map = mapOf('a', 'b', 'c');
  const hand = new SecondChance(map);
  map.get('a')!.used = true;
  assert.equal(evict(map, hand), 'b');
  assert.equal(map.get('a')!.used, false);
  map.get('c')!.used = true;
  assert.equal(evict(map, hand), 'a', 'c passed over, round again: a unused now');
  assert.equal(evict(map, hand), 'c');
});

test('SecondChance: the hand goes on from where it stopped: an entry set since is met in turn, a deleted one skipped', () => {
  const map = mapOf('a', 'b', 'c', 'd');
  const hand = new SecondChance(map);
  assert.equal(evict(map, hand), 'a');
  map.set('e', { used: false });
  map.set('f', { used: false });
  map.delete('c');
  map.get('b')!.used = true;
  assert.equal(evict(map, hand), 'd', 'b passed over, c deleted');
  assert.equal(evict(map, hand), 'e', 'set since, met in turn');
  assert.equal(evict(map, hand), 'b', 'f the newest: round again, b unused now');
  assert.equal(evict(map, hand), 'f', 'alone');
  assert.equal(map.size, 0);
});

test('SecondChance: the newest entry is not the victim while there is another, so a cache whose entries were all used still takes new ones', () => {
  // Four entries hit, then a new one set and one evicted at a time, as a cache of four does: the hand
  // that reached the newest took it, and then each one set after it (none was kept again).
  const map = new Map<number, { used: boolean }>();
  for (let i = 0; i < 4; i++) map.set(i, { used: true });
  const hand = new SecondChance(map);
  const victims: number[] = [];
  for (let i = 4; i < 12; i++) {
    map.set(i, { used: false });
    const victim = hand.next()!;
    map.delete(victim[0]);
    victims.push(victim[0]);
  }
  assert.deepEqual(victims, [0, 1, 2, 3, 4, 5, 6, 7], 'the oldest first, once their flags are cleared');
  assert.deepEqual([...map.keys()], [8, 9, 10, 11]);
});

test('SecondChance: every entry used -> one round clears them all, then the oldest goes', () => {
  const map = mapOf('a', 'b');
  for (const v of map.values()) v.used = true;
  const hand = new SecondChance(map);
  assert.equal(evict(map, hand), 'a');
  assert.equal(map.get('b')!.used, false);
});
