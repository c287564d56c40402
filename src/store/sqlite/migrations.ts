import type Database from 'better-sqlite3';
import { instantKeySql } from '../date-time-sql';
import { migrate as migrateWith, type Migration } from '../migration';
import { PAGE_INDEXES_SQL, metaAndKeysSql, orderEventsTableSql, ordersTableSql } from '../sql';
import { firstShipDateShape, shipDateCheck, shipDateRefusal } from '../sql';
import { sqliteConnection, sqliteDialect } from './dialect';

export type { Migration } from '../migration';

const dialect = sqliteDialect;
const SHIP_DATE_RFC3339 = shipDateCheck(dialect);
const COLUMNS = 'id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at';

/**
 * SQLite cannot change a table's CHECKs in place: `orders` is rebuilt as `table` (made under the
 * name orders_next), its rows copied as they are (checked by its CHECKs as they go in), then
 * `indexes` made again.
 */
function rebuildOrders(table: string, copy: { into: string; from: string }, indexes: string): string {
  return `
      ${table};
      INSERT INTO orders_next (${copy.into}) SELECT ${copy.from} FROM orders;
      DROP TABLE orders;
      ALTER TABLE orders_next RENAME TO orders;
      ${indexes}`;
}

const PET_INDEX_SQL = `CREATE INDEX orders_pet_id ON orders (pet_id) WHERE status <> 'cancelled';`;

/**
 * The SQLite schema history, applied in order. A migration that has shipped does what it did:
 * 2 and 3 write the ship date's CHECK from today's shipDateRule, which accepts exactly what their
 * first text did (tests/date-time-check.test.ts holds both to the contract's validator).
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'orders and api keys',
    sql: `
      ${ordersTableSql(dialect, 'orders', firstShipDateShape(dialect))};
      ${PET_INDEX_SQL}
      ${metaAndKeysSql(dialect)}
    `,
  },
  {
    version: 2,
    name: 'ship dates are RFC 3339 date-times',
    refuseWhile: shipDateRefusal(dialect),
    sql: rebuildOrders(ordersTableSql(dialect, 'orders_next', SHIP_DATE_RFC3339), { into: COLUMNS, from: COLUMNS }, PET_INDEX_SQL),
  },
  {
    version: 3,
    name: 'ship instants and the indexes of paged lists; a secret for cursors',
    // ship_at is written by the store from the ship date (instantKey), outside the import's write
    // lock: as a CHECK or a generated column SQLite would compute it, row by row, under the lock.
    sql: `${rebuildOrders(
      ordersTableSql(dialect, 'orders_next', SHIP_DATE_RFC3339, 'TEXT    NOT NULL'),
      { into: `${COLUMNS}, ship_at`, from: `${COLUMNS}, ${instantKeySql('ship_date')}` },
      PAGE_INDEXES_SQL,
    )}
      ALTER TABLE store_meta ADD COLUMN cursor_secret TEXT;
    `,
  },
  {
    version: 4,
    name: 'imports published in slices',
    // While its one row stands, an import is being published a slice per write transaction: the
    // orders with ids from from_id to to_id are its own (no other order has one), and every read
    // and write leaves them out (PUBLISHED, in ./rows.ts) until its last transaction removes the
    // row. until_ms is the importer's lease, renewed with each slice: past it, the next import
    // removes those orders.
    sql: `
      CREATE TABLE import_publishing (
        one      INTEGER PRIMARY KEY CHECK (one = 1),
        from_id  INTEGER NOT NULL,
        to_id    INTEGER NOT NULL,
        token    TEXT    NOT NULL,
        until_ms INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 5,
    name: 'the ship date rule, readable',
    // A database made before this release has the rule's first text, the same verdicts written as a
    // 60-line nest of CASE and substr: it gets today's, which a person can read and an import pays
    // less for. Every row passes it already (migration 2 saw to that).
    sql: rebuildOrders(
      ordersTableSql(dialect, 'orders_next', SHIP_DATE_RFC3339, 'TEXT    NOT NULL'),
      { into: `${COLUMNS}, ship_at`, from: `${COLUMNS}, ship_at` },
      PAGE_INDEXES_SQL,
    ),
  },
  {
    version: 6,
    name: 'the change feed',
    // The one writer commits events in seq order, so seq alone is the feed's order (AUTOINCREMENT:
    // a seq is never given twice, even after the newest events are removed). events_pruned_seq is
    // the last event a prune removed: a cursor before it has lost events. events_from holds back,
    // while an import publishes in slices, every event from its first on (./store.ts).
    sql: `
      ${orderEventsTableSql(dialect, 'seq         INTEGER PRIMARY KEY AUTOINCREMENT')};
      ALTER TABLE store_meta ADD COLUMN events_pruned_seq INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE import_publishing ADD COLUMN events_from INTEGER NOT NULL DEFAULT 0;
    `,
  },
];

/**
 * Applies every migration newer than the database's (../migration.ts), all in one immediate
 * transaction so that two processes starting at once cannot race.
 */
export function migrate(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS): void {
  migrateWith(sqliteConnection(db), sqliteDialect, migrations);
}
