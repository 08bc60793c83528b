/**
 * Appends `value` to the list `map` holds for `key`. In place: the copy `map.set(k, [...(map.get(k) ?? []), v])`
 * this replaces made grouping quadratic in a group's size — 16,000 changed files adding the same lines took
 * `similar-edit` 21 s.
 */
export function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
