import type { PoolClient } from 'pg';
import { DATE_TIME_DIGITS, dateTimeCheckSql, instantKeySql } from '../date-time-sql';
import { driveAsync, migrationSteps, type Migration } from '../migration';
import { PAGE_INDEXES_SQL, SAFE_INTEGER_SQL, SHIP_DATE_RULE } from '../shared';

const SAFE = SAFE_INTEGER_SQL;

/** The PostgreSQL schema history. Append only: never edit a migration that has shipped. */
export const PG_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'orders and api keys',
    sql: `
      CREATE TABLE orders (
        id           BIGINT  PRIMARY KEY CONSTRAINT order_id_safe CHECK (id BETWEEN -${SAFE} AND ${SAFE}),
        pet_id       BIGINT  NOT NULL CONSTRAINT order_pet_id_safe CHECK (pet_id BETWEEN -${SAFE} AND ${SAFE}),
        quantity     BIGINT  NOT NULL CONSTRAINT order_quantity_range CHECK (quantity BETWEEN 1 AND ${SAFE}),
        ship_date    TEXT    NOT NULL CONSTRAINT order_ship_date_shape CHECK (
                               length(ship_date) BETWEEN 19 AND 64
                               AND ship_date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}'),
        complete     BOOLEAN NOT NULL,
        status       TEXT    NOT NULL DEFAULT 'pending'
                             CONSTRAINT order_status_known CHECK (status IN ('pending', 'shipped', 'cancelled')),
        created_at   TEXT    NOT NULL,
        shipped_at   TEXT,
        cancelled_at TEXT,
        CONSTRAINT order_cancelled_at CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
        CONSTRAINT order_shipped_at CHECK ((status = 'shipped') = (shipped_at IS NOT NULL))
      );
      CREATE INDEX orders_listed ON orders (id) WHERE status <> 'cancelled';
      CREATE INDEX orders_pet_id ON orders (pet_id) WHERE status <> 'cancelled';

      -- One row: a random id for this database, and a counter bumped by every write that changes
      -- what listOrders returns. Together they make the list's ETag, the same in every instance.
      CREATE TABLE store_meta (
        one      INTEGER PRIMARY KEY CHECK (one = 1),
        store_id TEXT    NOT NULL,
        revision BIGINT  NOT NULL
      );
      INSERT INTO store_meta (one, store_id, revision) VALUES (1, substr(md5(random()::text || clock_timestamp()::text), 1, 16), 0);

      CREATE TABLE api_keys (
        id         BIGSERIAL PRIMARY KEY,
        name       TEXT NOT NULL CONSTRAINT api_keys_name_unique UNIQUE,
        key_hash   TEXT NOT NULL CONSTRAINT api_keys_hash_unique UNIQUE,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );
    `,
  },
  {
    version: 2,
    name: 'ship dates are RFC 3339 date-times',
    refuseWhile: {
      rule: SHIP_DATE_RULE,
      violationsSql: `SELECT id FROM orders WHERE NOT ${dateTimeCheckSql('ship_date', 'postgres')} ORDER BY id`,
    },
    sql: `
      ALTER TABLE orders DROP CONSTRAINT order_ship_date_shape;
      ALTER TABLE orders ADD CONSTRAINT order_ship_date_rfc3339 CHECK ${dateTimeCheckSql('ship_date', 'postgres')};
    `,
  },
  {
    version: 3,
    name: 'ship instants and the indexes of paged lists; a secret for cursors',
    // Generated from the ship date, so that no writer can store one that disagrees with it; the
    // "C" collation compares the keys byte by byte, as instantKey orders them. A ship date without
    // the digits of a date-time (which its CHECK then refuses, under its own name) has none, rather
    // than failing a cast first: one regular expression, not the CHECK's whole rule a second time.
    sql: `
      ALTER TABLE orders ADD COLUMN ship_at TEXT COLLATE "C" GENERATED ALWAYS AS (
        CASE WHEN ship_date ~ '${DATE_TIME_DIGITS}' THEN ${instantKeySql('ship_date')} END) STORED;
      DROP INDEX orders_pet_id;
      ${PAGE_INDEXES_SQL}
      ALTER TABLE store_meta ADD COLUMN cursor_secret TEXT;
    `,
  },
];

/** Any 64-bit value; all instances of petstore-orders agree on it. */
const MIGRATION_LOCK = 0x70657473746f7265n; // "petstore"

/**
 * Applies every migration newer than the database's (migrationSteps, in ../migration.ts) in one
 * transaction, under an advisory lock held until it commits, so that several instances starting at
 * once apply each migration once.
 */
export async function migratePostgres(client: PoolClient, migrations: readonly Migration[] = PG_MIGRATIONS): Promise<void> {
  const create = `CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at TEXT NOT NULL
    )`;
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK.toString()]);
    await driveAsync(migrationSteps(migrations, create), async (step) => {
      if ('run' in step) await client.query(step.run);
      else if ('value' in step) {
        const { rows } = await client.query<unknown[]>({ text: step.value, rowMode: 'array' });
        const value = rows[0]?.[0];
        return value === null || value === undefined ? null : Number(value);
      } else if ('ids' in step) {
        const { rows } = await client.query<unknown[]>({ text: step.ids, rowMode: 'array' });
        return rows.map((row) => Number(row[0]));
      } else {
        await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
          step.applied.version,
          step.applied.name,
          step.applied.at,
        ]);
      }
      return undefined;
    });
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
