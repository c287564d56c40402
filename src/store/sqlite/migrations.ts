import type Database from 'better-sqlite3';
import { dateTimeCheckSql, instantKeySql } from '../date-time-sql';
import { driveSync, migrationSteps, type Migration } from '../migration';
import { PAGE_INDEXES_SQL, SAFE_INTEGER_SQL, SHIP_DATE_RULE } from '../shared';

export type { Migration } from '../migration';

const SAFE = SAFE_INTEGER_SQL;

/** The SQLite schema history. Append only: never edit a migration that has shipped. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'orders and api keys',
    sql: `
      CREATE TABLE orders (
        id           INTEGER PRIMARY KEY CONSTRAINT order_id_safe CHECK (id BETWEEN -${SAFE} AND ${SAFE}),
        pet_id       INTEGER NOT NULL CONSTRAINT order_pet_id_safe CHECK (pet_id BETWEEN -${SAFE} AND ${SAFE}),
        quantity     INTEGER NOT NULL CONSTRAINT order_quantity_range CHECK (quantity BETWEEN 1 AND ${SAFE}),
        ship_date    TEXT    NOT NULL CONSTRAINT order_ship_date_shape CHECK (
                               length(ship_date) BETWEEN 19 AND 64
                               AND ship_date GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][Tt ][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*'),
        complete     INTEGER NOT NULL CONSTRAINT order_complete_boolean CHECK (complete IN (0, 1)),
        status       TEXT    NOT NULL DEFAULT 'pending'
                             CONSTRAINT order_status_known CHECK (status IN ('pending', 'shipped', 'cancelled')),
        created_at   TEXT    NOT NULL,
        shipped_at   TEXT,
        cancelled_at TEXT,
        CONSTRAINT order_cancelled_at CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
        CONSTRAINT order_shipped_at CHECK ((status = 'shipped') = (shipped_at IS NOT NULL))
      ) STRICT;
      CREATE INDEX orders_pet_id ON orders (pet_id) WHERE status <> 'cancelled';

      -- One row: a random id for this database, and a counter bumped by every write that changes
      -- what listOrders returns. Together they make the list's ETag.
      CREATE TABLE store_meta (
        one      INTEGER PRIMARY KEY CHECK (one = 1),
        store_id TEXT    NOT NULL,
        revision INTEGER NOT NULL
      ) STRICT;
      INSERT INTO store_meta (one, store_id, revision) VALUES (1, lower(hex(randomblob(8))), 0);

      CREATE TABLE api_keys (
        id         INTEGER PRIMARY KEY,
        name       TEXT NOT NULL UNIQUE,
        key_hash   TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      ) STRICT;
    `,
  },
  {
    version: 2,
    name: 'ship dates are RFC 3339 date-times',
    refuseWhile: {
      rule: SHIP_DATE_RULE,
      violationsSql: `SELECT id FROM orders WHERE NOT ${dateTimeCheckSql('ship_date', 'sqlite')} ORDER BY id`,
    },
    // SQLite cannot change a CHECK in place: the table is rebuilt with the new one, rows copied as they are.
    sql: `
      CREATE TABLE orders_next (
        id           INTEGER PRIMARY KEY CONSTRAINT order_id_safe CHECK (id BETWEEN -${SAFE} AND ${SAFE}),
        pet_id       INTEGER NOT NULL CONSTRAINT order_pet_id_safe CHECK (pet_id BETWEEN -${SAFE} AND ${SAFE}),
        quantity     INTEGER NOT NULL CONSTRAINT order_quantity_range CHECK (quantity BETWEEN 1 AND ${SAFE}),
        ship_date    TEXT    NOT NULL CONSTRAINT order_ship_date_rfc3339 CHECK ${dateTimeCheckSql('ship_date', 'sqlite')},
        complete     INTEGER NOT NULL CONSTRAINT order_complete_boolean CHECK (complete IN (0, 1)),
        status       TEXT    NOT NULL DEFAULT 'pending'
                             CONSTRAINT order_status_known CHECK (status IN ('pending', 'shipped', 'cancelled')),
        created_at   TEXT    NOT NULL,
        shipped_at   TEXT,
        cancelled_at TEXT,
        CONSTRAINT order_cancelled_at CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
        CONSTRAINT order_shipped_at CHECK ((status = 'shipped') = (shipped_at IS NOT NULL))
      ) STRICT;
      INSERT INTO orders_next (id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at)
        SELECT id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at FROM orders;
      DROP TABLE orders;
      ALTER TABLE orders_next RENAME TO orders;
      CREATE INDEX orders_pet_id ON orders (pet_id) WHERE status <> 'cancelled';
    `,
  },
  {
    version: 3,
    name: 'ship instants and the indexes of paged lists; a secret for cursors',
    // ship_at is written by the store from the ship date (instantKey), outside the import's write
    // lock: as a CHECK or a generated column SQLite would compute it, row by row, under the lock.
    sql: `
      CREATE TABLE orders_next (
        id           INTEGER PRIMARY KEY CONSTRAINT order_id_safe CHECK (id BETWEEN -${SAFE} AND ${SAFE}),
        pet_id       INTEGER NOT NULL CONSTRAINT order_pet_id_safe CHECK (pet_id BETWEEN -${SAFE} AND ${SAFE}),
        quantity     INTEGER NOT NULL CONSTRAINT order_quantity_range CHECK (quantity BETWEEN 1 AND ${SAFE}),
        ship_date    TEXT    NOT NULL CONSTRAINT order_ship_date_rfc3339 CHECK ${dateTimeCheckSql('ship_date', 'sqlite')},
        complete     INTEGER NOT NULL CONSTRAINT order_complete_boolean CHECK (complete IN (0, 1)),
        status       TEXT    NOT NULL DEFAULT 'pending'
                             CONSTRAINT order_status_known CHECK (status IN ('pending', 'shipped', 'cancelled')),
        created_at   TEXT    NOT NULL,
        shipped_at   TEXT,
        cancelled_at TEXT,
        ship_at      TEXT    NOT NULL,
        CONSTRAINT order_cancelled_at CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
        CONSTRAINT order_shipped_at CHECK ((status = 'shipped') = (shipped_at IS NOT NULL))
      ) STRICT;
      INSERT INTO orders_next (id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at, ship_at)
        SELECT id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at, ${instantKeySql('ship_date')}
        FROM orders;
      DROP TABLE orders;
      ALTER TABLE orders_next RENAME TO orders;
      ${PAGE_INDEXES_SQL}
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
];

/**
 * Applies every migration newer than the database's (migrationSteps, in ../migration.ts), all in
 * one immediate transaction so that two processes starting at once cannot race.
 */
export function migrate(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS): void {
  const create = `CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at TEXT NOT NULL
    ) STRICT`;
  db.transaction(() =>
    driveSync(migrationSteps(migrations, create), (step) => {
      if ('run' in step) db.exec(step.run);
      else if ('value' in step) return (db.prepare(step.value).pluck().get() as number | null | undefined) ?? null;
      else if ('ids' in step) return db.prepare(step.ids).pluck().all() as number[];
      else
        db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
          step.applied.version,
          step.applied.name,
          step.applied.at,
        );
      return undefined;
    }),
  ).immediate();
}
