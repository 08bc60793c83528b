import { BoundedArrayCache } from '../../src/codegraph/bounded-cache';

describe('BoundedArrayCache (blob identifiers and words, per workspace)', () => {
  it('keeps at most maxElements elements in all, the least recently used entry out first, and never an array longer than the bound', () => {
    const cache = new BoundedArrayCache<string>(5);
    cache.set('w1\0a', ['a1', 'a2']);
    cache.set('w1\0b', ['b1', 'b2']);
    expect(cache.get('w1\0a')).toEqual(['a1', 'a2']); // a is now the most recently used
    cache.set('w1\0c', ['c1', 'c2']); // 6 > 5: b, the least recently used, goes
    expect(cache.get('w1\0b')).toBeUndefined();
    expect(cache.get('w1\0a')).toEqual(['a1', 'a2']);
    expect(cache.get('w1\0c')).toEqual(['c1', 'c2']);
    cache.set('w1\0huge', ['1', '2', '3', '4', '5', '6']); // longer than the whole bound: not kept, nothing evicted
    expect(cache.get('w1\0huge')).toBeUndefined();
    expect(cache.get('w1\0a')).toEqual(['a1', 'a2']);
    // A key kept already is not replaced (concurrent readers of one blob store the same array once).
    cache.set('w1\0a', ['other']);
    expect(cache.get('w1\0a')).toEqual(['a1', 'a2']);
    // Keys carry the workspace: another workspace's read of the same blob is a miss.
    expect(cache.get('w2\0a')).toBeUndefined();
  });
});
