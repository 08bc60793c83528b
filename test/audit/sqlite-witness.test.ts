import * as fs from 'node:fs';
import { sqliteBackdoor } from './support';
import { witnessSuite } from './witness-cases';
import { auditRowsSuite } from './audit-rows-cases';

const dirs: string[] = [];
witnessSuite('sqlite file', async () => {
  const door = sqliteBackdoor('witness');
  dirs.push(door.dir);
  return door;
});
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
auditRowsSuite('sqlite file', async () => {
  const door = sqliteBackdoor('rows');
  dirs.push(door.dir);
  return door;
});
