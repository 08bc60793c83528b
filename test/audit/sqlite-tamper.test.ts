import * as fs from 'node:fs';
import { sqliteBackdoor } from './support';
import { tamperSuite } from './tamper-cases';

const dirs: string[] = [];
tamperSuite('sqlite file', async () => {
  const door = sqliteBackdoor('tamper');
  dirs.push(door.dir);
  return door;
});
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
