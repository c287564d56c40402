import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createApp } from '../src/app';
import { sql } from './helpers/postgres';
import { eachStore } from './helpers/store-suite';
import { recordV1, seedV1Store, type RecordedResponse } from './helpers/v1-scenario';

// v1 did not move when v2 came: the same requests, on the same store, get the same bytes as
// before v2 existed. tests/fixtures/v1-responses.json was recorded by recordV1 from the release
// before v2 (1.0.0's code), on SQLite; both stores must answer exactly that.
const before = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'v1-responses.json'), 'utf8')) as RecordedResponse[];

eachStore((s) => {
  test('every v1 response is byte for byte what it was before v2', async () => {
    await seedV1Store(s.store, async (statement) => {
      if (s.kind.name === 'postgres') await sql(s.fresh.env.PETSTORE_DATABASE_URL!, statement);
      else {
        const db = new Database(s.fresh.cliArgs[1]);
        db.exec(statement);
        db.close();
      }
    });

    const now = await recordV1(await createApp({ store: s.store }), s.key);

    expect(before).toHaveLength(20);
    for (let i = 0; i < before.length; i += 1) expect(now[i]).toEqual(before[i]);
  });
});
