import { createHash, randomBytes } from 'node:crypto';
import { deriveEventId, newUuidV7, uuidV7Time } from '../../src/events/ids';

/**
 * Event ids derived from a key are stored: a retry after an upgrade must derive the very same ids, and a
 * key's timestamp must read the same. Both were rewritten for speed (one-shot sha256, no regex per
 * command); these are the formulas they replaced, checked on many keys.
 */
const oldDerive = (key: string, n: number): string => {
  if (n === 0) return key;
  const h = createHash('sha256').update(`${key}/${n}`).digest('hex');
  const hex = key.replace(/-/g, '').slice(0, 12) + '7' + h.slice(0, 3) + ((parseInt(h[3], 16) & 0x3) | 0x8).toString(16) + h.slice(4, 19);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
};
const oldTime = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

test('deriveEventId and uuidV7Time give what the earlier formulas gave', () => {
  let differences = 0;
  for (let i = 0; i < 5000; i++) {
    const key = i % 2 ? newUuidV7() : newUuidV7().toUpperCase();
    for (const n of [0, 1, 2, 17, 500]) if (deriveEventId(key, n) !== oldDerive(key, n)) differences++;
    if (uuidV7Time(key) !== oldTime(key)) differences++;
    // Any string at all (the time is read only after the key's format was checked, but the function is exported).
    const junk = randomBytes(1 + (i % 40))
      .toString(i % 3 ? 'hex' : 'base64')
      .replace(/[0-9]/g, (d) => (Number(d) < 3 ? '-' : d));
    if (!Object.is(uuidV7Time(junk), oldTime(junk))) differences++;
  }
  expect(differences).toBe(0);
  expect(deriveEventId('01890a5d-ac96-774b-bcce-b302099a8057', 1)).toBe(oldDerive('01890a5d-ac96-774b-bcce-b302099a8057', 1));
});
