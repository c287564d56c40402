import type Database from 'better-sqlite3';
import { ImportConflictError, type ImportRecord } from '../types';
import { guard, sqliteCode, translate } from './errors';
import { BUMP_REVISION_SQL } from '../shared';

const STAGING = 'temp.import_staging';

/**
 * Imports records through a connection-private staging table, so that the file streams in without
 * holding the database's write lock: records are staged one by one, then moved into `orders` in one
 * short immediate transaction. Records with an id go in first; records without one then get the
 * next ids after the largest, in file order, so an assigned id never collides with one in the file.
 */
export async function importThroughStaging(
  db: Database.Database,
  records: Iterable<ImportRecord> | AsyncIterable<ImportRecord>,
  now: string,
): Promise<number> {
  guard(() => {
    db.exec(`CREATE TEMP TABLE IF NOT EXISTS import_staging (
      idx       INTEGER PRIMARY KEY,
      id        INTEGER UNIQUE,
      pet_id    INTEGER NOT NULL,
      quantity  INTEGER NOT NULL,
      ship_date TEXT    NOT NULL,
      complete  INTEGER NOT NULL,
      status    TEXT    NOT NULL
    )`);
    db.exec(`DELETE FROM ${STAGING}`);
  });
  try {
    const count = await stage(db, records);
    return guard(() => db.transaction(() => publish(db, count, now)).immediate());
  } finally {
    guard(() => db.exec(`DELETE FROM ${STAGING}`));
  }
}

async function stage(db: Database.Database, records: Iterable<ImportRecord> | AsyncIterable<ImportRecord>): Promise<number> {
  const insert = db.prepare(
    `INSERT INTO ${STAGING} (idx, id, pet_id, quantity, ship_date, complete, status)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const firstWithId = db.prepare<[number], { idx: number }>(`SELECT idx FROM ${STAGING} WHERE id = ?`);
  let index = 0;
  // Only the temp database is written here, so this transaction takes no lock on the main file.
  db.exec('BEGIN');
  try {
    for await (const record of records) {
      try {
        insert.run(
          index,
          record.id ?? null,
          record.petId,
          record.quantity,
          record.shipDate,
          record.complete ? 1 : 0,
          record.status ?? 'pending',
        );
      } catch (err) {
        if (sqliteCode(err) === 'SQLITE_CONSTRAINT_UNIQUE' && record.id !== undefined) {
          const first = firstWithId.get(record.id)!.idx;
          throw new ImportConflictError(index, 'id', `id ${record.id} repeats the id of record ${first}`);
        }
        throw err;
      }
      index += 1;
    }
    db.exec('COMMIT');
    return index;
  } catch (err) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw translate(err);
  }
}

function publish(db: Database.Database, count: number, now: string): number {
  const clash = db
    .prepare<[], { idx: number; id: number }>(
      `SELECT s.idx, s.id FROM ${STAGING} s JOIN main.orders o ON o.id = s.id ORDER BY s.idx LIMIT 1`,
    )
    .get();
  if (clash) throw new ImportConflictError(clash.idx, 'id', `id ${clash.id} is already taken by an existing order`);
  const move = (where: string): void => {
    db.prepare(
      `INSERT INTO main.orders (id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at)
       SELECT id, pet_id, quantity, ship_date, complete, status, @now, CASE status WHEN 'shipped' THEN @now END
       FROM ${STAGING} WHERE ${where} ORDER BY idx`,
    ).run({ now });
  };
  move('id IS NOT NULL');
  const largest = db.prepare<[], { id: number | null }>('SELECT max(id) AS id FROM main.orders').get()!.id ?? 0;
  try {
    move('id IS NULL');
  } catch (err) {
    if (sqliteCode(err) === 'SQLITE_CONSTRAINT_CHECK' && /order_id_safe/.test(String(err))) {
      // The first record left without an id is the one past the ids still free above the largest.
      const free = Number.MAX_SAFE_INTEGER - largest;
      const first = db
        .prepare<[number], { idx: number }>(`SELECT idx FROM ${STAGING} WHERE id IS NULL ORDER BY idx LIMIT 1 OFFSET ?`)
        .get(free)!;
      throw new ImportConflictError(first.idx, 'id', 'id cannot be assigned: no larger id is free; give this record an id');
    }
    throw err;
  }
  if (count > 0) db.prepare(BUMP_REVISION_SQL).run();
  return count;
}
