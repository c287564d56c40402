import type Database from 'better-sqlite3';
import { webhookTables } from '../webhooks';
import {
  KEY_EXPIRY_AND_ROTATION,
  KEY_SCOPES,
  eventCompleteness,
  idempotencyKeys,
  keyRateLimits,
  SHIP_DATE_RULE,
  migrate as migrateWith,
  type Migration,
} from '../migration';
import { shipDateRule } from '../date-time-sql';
import { sqliteConnection, sqliteDialect } from './dialect';

export type { Migration } from '../migration';

/**
 * The SQLite schema history, applied in order, each migration as the literal SQL it runs: a
 * migration that has shipped is a record, and never changes (tests/store/migrations.test.ts holds
 * each one's text to its digest). A new schema change is a new migration at the end. SQLite
 * cannot change a table's CHECKs in place, so 2, 3, 5 and 13 rebuild `orders` as orders_next, copy
 * its rows (checked by the new CHECKs as they go in), and make its indexes again. Their ship date
 * CHECK is the contract's rule as shipDateRule spells it (../date-time-sql.ts), which
 * tests/store/date-time-check.test.ts holds to the contract's validator.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'orders and api keys',
    sql: String.raw`
      CREATE TABLE orders (
        id           INTEGER PRIMARY KEY CONSTRAINT order_id_safe CHECK (id BETWEEN -9007199254740991 AND 9007199254740991),
        pet_id       INTEGER NOT NULL CONSTRAINT order_pet_id_safe CHECK (pet_id BETWEEN -9007199254740991 AND 9007199254740991),
        quantity     INTEGER NOT NULL CONSTRAINT order_quantity_range CHECK (quantity BETWEEN 1 AND 9007199254740991),
        ship_date    TEXT    NOT NULL CONSTRAINT order_ship_date_shape CHECK (length(ship_date) BETWEEN 19 AND 64 AND ship_date GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][Tt ][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*'),
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
      -- what listOrders returns. Together they make the list's ETag, the same in every instance.
      CREATE TABLE store_meta (
        one      INTEGER PRIMARY KEY CHECK (one = 1),
        store_id TEXT    NOT NULL,
        revision INTEGER NOT NULL
      ) STRICT;
      INSERT INTO store_meta (one, store_id, revision) VALUES (1, lower(hex(randomblob(8))), 0);

      CREATE TABLE api_keys (
        id         INTEGER PRIMARY KEY,
        name       TEXT NOT NULL CONSTRAINT api_keys_name_unique UNIQUE,
        key_hash   TEXT NOT NULL CONSTRAINT api_keys_hash_unique UNIQUE,
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
      violationsSql: String.raw`SELECT id FROM orders WHERE NOT (CASE
  -- the usual forms, decided at once: YYYY-MM-DDTHH:MM:SSZ, and with milliseconds
  WHEN ship_date GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z' OR ship_date GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9].[0-9][0-9][0-9]Z'
  THEN date(substr(ship_date, 1, 10)) IS substr(ship_date, 1, 10) AND substr(ship_date, 12, 2) <= '23'
  -- any other
  WHEN length(ship_date) BETWEEN 20 AND 64
    -- YYYY-MM-DD?HH:MM:SS
    AND substr(ship_date, 1, 19) GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]?[0-9][0-9]:[0-9][0-9]:[0-9][0-9]'
    -- between date and time: T, t or whitespace (JavaScript's \s)
    AND instr(char(84, 116, 9, 10, 11, 12, 13, 32, 160, 5760, 8192, 8193, 8194, 8195, 8196, 8197, 8198, 8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288, 65279), substr(ship_date, 11, 1)) > 0
    -- after the seconds: the zone at once, or a dot, digits, then the zone
    AND (substr(ship_date, 20) GLOB '[Zz+-]*' OR (substr(ship_date, 20) GLOB '.[0-9]*' AND ltrim(substr(ship_date, 21), '0123456789') GLOB '[Zz+-]*'))
    -- the zone: Z, ±HH, ±HHMM or ±HH:MM, its minutes 00–59
    AND (ltrim(substr(ship_date, 20), '.0123456789') IN ('Z', 'z') OR ltrim(substr(ship_date, 20), '.0123456789') GLOB '[+-][0-9][0-9]' OR ltrim(substr(ship_date, 20), '.0123456789') GLOB '[+-][0-9][0-9][0-5][0-9]' OR ltrim(substr(ship_date, 20), '.0123456789') GLOB '[+-][0-9][0-9]:[0-5][0-9]')
  THEN
    -- a real calendar day
    date(substr(ship_date, 1, 10)) IS substr(ship_date, 1, 10)
    -- a zone within a day
    AND substr(ltrim(substr(ship_date, 20), '.0123456789'), 2, 2) <= '23'
    -- a clock time
    AND ((substr(ship_date, 12, 2) <= '23' AND substr(ship_date, 15, 2) <= '59' AND substr(ship_date, 18, 2) <= '59')
      -- or a leap second: up to :60 in the last minute of the UTC day, as the validator computes it
      OR (substr(ship_date, 18, 2) <= '60'
        AND CAST(substr(ship_date, 15, 2) AS INTEGER) - (CASE WHEN ltrim(substr(ship_date, 20), '.0123456789') LIKE '-%' THEN -1 ELSE 1 END) * CAST('0' || substr(replace(ltrim(substr(ship_date, 20), '.0123456789'), ':', ''), 4, 2) AS INTEGER) IN (59, -1)
        AND CAST(substr(ship_date, 12, 2) AS INTEGER) * 60 + CAST(substr(ship_date, 15, 2) AS INTEGER) - (CASE WHEN ltrim(substr(ship_date, 20), '.0123456789') LIKE '-%' THEN -1 ELSE 1 END) * (CAST('0' || substr(ltrim(substr(ship_date, 20), '.0123456789'), 2, 2) AS INTEGER) * 60 + CAST('0' || substr(replace(ltrim(substr(ship_date, 20), '.0123456789'), ':', ''), 4, 2) AS INTEGER)) IN (1439, -1)))
  ELSE FALSE END) ORDER BY id`,
    },
    sql: String.raw`
      CREATE TABLE orders_next (
        id           INTEGER PRIMARY KEY CONSTRAINT order_id_safe CHECK (id BETWEEN -9007199254740991 AND 9007199254740991),
        pet_id       INTEGER NOT NULL CONSTRAINT order_pet_id_safe CHECK (pet_id BETWEEN -9007199254740991 AND 9007199254740991),
        quantity     INTEGER NOT NULL CONSTRAINT order_quantity_range CHECK (quantity BETWEEN 1 AND 9007199254740991),
        ship_date    TEXT    NOT NULL CONSTRAINT order_ship_date_rfc3339 CHECK (CASE
  -- the usual forms, decided at once: YYYY-MM-DDTHH:MM:SSZ, and with milliseconds
  WHEN ship_date GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z' OR ship_date GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9].[0-9][0-9][0-9]Z'
  THEN date(substr(ship_date, 1, 10)) IS substr(ship_date, 1, 10) AND substr(ship_date, 12, 2) <= '23'
  -- any other
  WHEN length(ship_date) BETWEEN 20 AND 64
    -- YYYY-MM-DD?HH:MM:SS
    AND substr(ship_date, 1, 19) GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]?[0-9][0-9]:[0-9][0-9]:[0-9][0-9]'
    -- between date and time: T, t or whitespace (JavaScript's \s)
    AND instr(char(84, 116, 9, 10, 11, 12, 13, 32, 160, 5760, 8192, 8193, 8194, 8195, 8196, 8197, 8198, 8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288, 65279), substr(ship_date, 11, 1)) > 0
    -- after the seconds: the zone at once, or a dot, digits, then the zone
    AND (substr(ship_date, 20) GLOB '[Zz+-]*' OR (substr(ship_date, 20) GLOB '.[0-9]*' AND ltrim(substr(ship_date, 21), '0123456789') GLOB '[Zz+-]*'))
    -- the zone: Z, ±HH, ±HHMM or ±HH:MM, its minutes 00–59
    AND (ltrim(substr(ship_date, 20), '.0123456789') IN ('Z', 'z') OR ltrim(substr(ship_date, 20), '.0123456789') GLOB '[+-][0-9][0-9]' OR ltrim(substr(ship_date, 20), '.0123456789') GLOB '[+-][0-9][0-9][0-5][0-9]' OR ltrim(substr(ship_date, 20), '.0123456789') GLOB '[+-][0-9][0-9]:[0-5][0-9]')
  THEN
    -- a real calendar day
    date(substr(ship_date, 1, 10)) IS substr(ship_date, 1, 10)
    -- a zone within a day
    AND substr(ltrim(substr(ship_date, 20), '.0123456789'), 2, 2) <= '23'
    -- a clock time
    AND ((substr(ship_date, 12, 2) <= '23' AND substr(ship_date, 15, 2) <= '59' AND substr(ship_date, 18, 2) <= '59')
      -- or a leap second: up to :60 in the last minute of the UTC day, as the validator computes it
      OR (substr(ship_date, 18, 2) <= '60'
        AND CAST(substr(ship_date, 15, 2) AS INTEGER) - (CASE WHEN ltrim(substr(ship_date, 20), '.0123456789') LIKE '-%' THEN -1 ELSE 1 END) * CAST('0' || substr(replace(ltrim(substr(ship_date, 20), '.0123456789'), ':', ''), 4, 2) AS INTEGER) IN (59, -1)
        AND CAST(substr(ship_date, 12, 2) AS INTEGER) * 60 + CAST(substr(ship_date, 15, 2) AS INTEGER) - (CASE WHEN ltrim(substr(ship_date, 20), '.0123456789') LIKE '-%' THEN -1 ELSE 1 END) * (CAST('0' || substr(ltrim(substr(ship_date, 20), '.0123456789'), 2, 2) AS INTEGER) * 60 + CAST('0' || substr(replace(ltrim(substr(ship_date, 20), '.0123456789'), ':', ''), 4, 2) AS INTEGER)) IN (1439, -1)))
  ELSE FALSE END),
        complete     INTEGER NOT NULL CONSTRAINT order_complete_boolean CHECK (complete IN (0, 1)),
        status       TEXT    NOT NULL DEFAULT 'pending'
                             CONSTRAINT order_status_known CHECK (status IN ('pending', 'shipped', 'cancelled')),
        created_at   TEXT    NOT NULL,
        shipped_at   TEXT,
        cancelled_at TEXT,
        CONSTRAINT order_cancelled_at CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
        CONSTRAINT order_shipped_at CHECK ((status = 'shipped') = (shipped_at IS NOT NULL))
      ) STRICT;
      INSERT INTO orders_next (id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at) SELECT id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at FROM orders;
      DROP TABLE orders;
      ALTER TABLE orders_next RENAME TO orders;
      CREATE INDEX orders_pet_id ON orders (pet_id) WHERE status <> 'cancelled';`,
  },
  {
    version: 3,
    name: 'ship instants and the indexes of paged lists; a secret for cursors',
    // ship_at is written by the store from the ship date (instantKey), outside the import's write
    // lock: as a CHECK or a generated column SQLite would compute it, row by row, under the lock.
    sql: String.raw`
      CREATE TABLE orders_next (
        id           INTEGER PRIMARY KEY CONSTRAINT order_id_safe CHECK (id BETWEEN -9007199254740991 AND 9007199254740991),
        pet_id       INTEGER NOT NULL CONSTRAINT order_pet_id_safe CHECK (pet_id BETWEEN -9007199254740991 AND 9007199254740991),
        quantity     INTEGER NOT NULL CONSTRAINT order_quantity_range CHECK (quantity BETWEEN 1 AND 9007199254740991),
        ship_date    TEXT    NOT NULL CONSTRAINT order_ship_date_rfc3339 CHECK (CASE
  -- the usual forms, decided at once: YYYY-MM-DDTHH:MM:SSZ, and with milliseconds
  WHEN ship_date GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z' OR ship_date GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9].[0-9][0-9][0-9]Z'
  THEN date(substr(ship_date, 1, 10)) IS substr(ship_date, 1, 10) AND substr(ship_date, 12, 2) <= '23'
  -- any other
  WHEN length(ship_date) BETWEEN 20 AND 64
    -- YYYY-MM-DD?HH:MM:SS
    AND substr(ship_date, 1, 19) GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]?[0-9][0-9]:[0-9][0-9]:[0-9][0-9]'
    -- between date and time: T, t or whitespace (JavaScript's \s)
    AND instr(char(84, 116, 9, 10, 11, 12, 13, 32, 160, 5760, 8192, 8193, 8194, 8195, 8196, 8197, 8198, 8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288, 65279), substr(ship_date, 11, 1)) > 0
    -- after the seconds: the zone at once, or a dot, digits, then the zone
    AND (substr(ship_date, 20) GLOB '[Zz+-]*' OR (substr(ship_date, 20) GLOB '.[0-9]*' AND ltrim(substr(ship_date, 21), '0123456789') GLOB '[Zz+-]*'))
    -- the zone: Z, ±HH, ±HHMM or ±HH:MM, its minutes 00–59
    AND (ltrim(substr(ship_date, 20), '.0123456789') IN ('Z', 'z') OR ltrim(substr(ship_date, 20), '.0123456789') GLOB '[+-][0-9][0-9]' OR ltrim(substr(ship_date, 20), '.0123456789') GLOB '[+-][0-9][0-9][0-5][0-9]' OR ltrim(substr(ship_date, 20), '.0123456789') GLOB '[+-][0-9][0-9]:[0-5][0-9]')
  THEN
    -- a real calendar day
    date(substr(ship_date, 1, 10)) IS substr(ship_date, 1, 10)
    -- a zone within a day
    AND substr(ltrim(substr(ship_date, 20), '.0123456789'), 2, 2) <= '23'
    -- a clock time
    AND ((substr(ship_date, 12, 2) <= '23' AND substr(ship_date, 15, 2) <= '59' AND substr(ship_date, 18, 2) <= '59')
      -- or a leap second: up to :60 in the last minute of the UTC day, as the validator computes it
      OR (substr(ship_date, 18, 2) <= '60'
        AND CAST(substr(ship_date, 15, 2) AS INTEGER) - (CASE WHEN ltrim(substr(ship_date, 20), '.0123456789') LIKE '-%' THEN -1 ELSE 1 END) * CAST('0' || substr(replace(ltrim(substr(ship_date, 20), '.0123456789'), ':', ''), 4, 2) AS INTEGER) IN (59, -1)
        AND CAST(substr(ship_date, 12, 2) AS INTEGER) * 60 + CAST(substr(ship_date, 15, 2) AS INTEGER) - (CASE WHEN ltrim(substr(ship_date, 20), '.0123456789') LIKE '-%' THEN -1 ELSE 1 END) * (CAST('0' || substr(ltrim(substr(ship_date, 20), '.0123456789'), 2, 2) AS INTEGER) * 60 + CAST('0' || substr(replace(ltrim(substr(ship_date, 20), '.0123456789'), ':', ''), 4, 2) AS INTEGER)) IN (1439, -1)))
  ELSE FALSE END),
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
      INSERT INTO orders_next (id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at, ship_at) SELECT id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at, (CAST(((((CAST(substr(ship_date, 1, 4) AS BIGINT) + 400 - (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) <= 2 THEN 1 ELSE 0 END)) / 400) * 146097 + ((CAST(substr(ship_date, 1, 4) AS BIGINT) + 400 - (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) <= 2 THEN 1 ELSE 0 END)) - ((CAST(substr(ship_date, 1, 4) AS BIGINT) + 400 - (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) <= 2 THEN 1 ELSE 0 END)) / 400) * 400) * 365 + ((CAST(substr(ship_date, 1, 4) AS BIGINT) + 400 - (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) <= 2 THEN 1 ELSE 0 END)) - ((CAST(substr(ship_date, 1, 4) AS BIGINT) + 400 - (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) <= 2 THEN 1 ELSE 0 END)) / 400) * 400) / 4 - ((CAST(substr(ship_date, 1, 4) AS BIGINT) + 400 - (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) <= 2 THEN 1 ELSE 0 END)) - ((CAST(substr(ship_date, 1, 4) AS BIGINT) + 400 - (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) <= 2 THEN 1 ELSE 0 END)) / 400) * 400) / 100 + ((153 * (CAST(substr(ship_date, 6, 2) AS BIGINT) + (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) > 2 THEN -3 ELSE 9 END)) + 2) / 5 + CAST(substr(ship_date, 9, 2) AS BIGINT) - 1)) * 86400 + CAST(substr(ship_date, 12, 2) AS BIGINT) * 3600 + CAST(substr(ship_date, 15, 2) AS BIGINT) * 60 + CAST(substr(ship_date, 18, 2) AS BIGINT) - (CASE WHEN substr(ship_date, length(ship_date) - (CASE WHEN substr(ship_date, length(ship_date), 1) IN ('Z', 'z') THEN 1
    WHEN substr(ship_date, length(ship_date) - 2, 1) IN ('+', '-') THEN 3 WHEN substr(ship_date, length(ship_date) - 4, 1) IN ('+', '-') THEN 5 ELSE 6 END) + 1, 1) = '-' THEN -1 ELSE 1 END) * ((CASE WHEN (CASE WHEN substr(ship_date, length(ship_date), 1) IN ('Z', 'z') THEN 1
    WHEN substr(ship_date, length(ship_date) - 2, 1) IN ('+', '-') THEN 3 WHEN substr(ship_date, length(ship_date) - 4, 1) IN ('+', '-') THEN 5 ELSE 6 END) > 1 THEN CAST(substr(ship_date, length(ship_date) - (CASE WHEN substr(ship_date, length(ship_date), 1) IN ('Z', 'z') THEN 1
    WHEN substr(ship_date, length(ship_date) - 2, 1) IN ('+', '-') THEN 3 WHEN substr(ship_date, length(ship_date) - 4, 1) IN ('+', '-') THEN 5 ELSE 6 END) + 2, 2) AS BIGINT) ELSE 0 END) * 3600 + (CASE WHEN (CASE WHEN substr(ship_date, length(ship_date), 1) IN ('Z', 'z') THEN 1
    WHEN substr(ship_date, length(ship_date) - 2, 1) IN ('+', '-') THEN 3 WHEN substr(ship_date, length(ship_date) - 4, 1) IN ('+', '-') THEN 5 ELSE 6 END) > 3 THEN CAST(substr(ship_date, length(ship_date) - 1, 2) AS BIGINT) ELSE 0 END) * 60) + 100000000000) AS TEXT) || '.' || (CASE WHEN substr(ship_date, 20, 1) = '.' THEN rtrim(substr(ship_date, 21, length(ship_date) - 20 - (CASE WHEN substr(ship_date, length(ship_date), 1) IN ('Z', 'z') THEN 1
    WHEN substr(ship_date, length(ship_date) - 2, 1) IN ('+', '-') THEN 3 WHEN substr(ship_date, length(ship_date) - 4, 1) IN ('+', '-') THEN 5 ELSE 6 END)), '0') ELSE '' END)) FROM orders;
      DROP TABLE orders;
      ALTER TABLE orders_next RENAME TO orders;
      
      CREATE INDEX orders_page ON orders (status, complete, id, ship_at) WHERE status <> 'cancelled';
      CREATE INDEX orders_page_by_pet ON orders (pet_id, id) WHERE status <> 'cancelled';
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
    sql: String.raw`
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
    sql: String.raw`
      CREATE TABLE orders_next (
        id           INTEGER PRIMARY KEY CONSTRAINT order_id_safe CHECK (id BETWEEN -9007199254740991 AND 9007199254740991),
        pet_id       INTEGER NOT NULL CONSTRAINT order_pet_id_safe CHECK (pet_id BETWEEN -9007199254740991 AND 9007199254740991),
        quantity     INTEGER NOT NULL CONSTRAINT order_quantity_range CHECK (quantity BETWEEN 1 AND 9007199254740991),
        ship_date    TEXT    NOT NULL CONSTRAINT order_ship_date_rfc3339 CHECK (CASE
  -- the usual forms, decided at once: YYYY-MM-DDTHH:MM:SSZ, and with milliseconds
  WHEN ship_date GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]Z' OR ship_date GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9].[0-9][0-9][0-9]Z'
  THEN date(substr(ship_date, 1, 10)) IS substr(ship_date, 1, 10) AND substr(ship_date, 12, 2) <= '23'
  -- any other
  WHEN length(ship_date) BETWEEN 20 AND 64
    -- YYYY-MM-DD?HH:MM:SS
    AND substr(ship_date, 1, 19) GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]?[0-9][0-9]:[0-9][0-9]:[0-9][0-9]'
    -- between date and time: T, t or whitespace (JavaScript's \s)
    AND instr(char(84, 116, 9, 10, 11, 12, 13, 32, 160, 5760, 8192, 8193, 8194, 8195, 8196, 8197, 8198, 8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288, 65279), substr(ship_date, 11, 1)) > 0
    -- after the seconds: the zone at once, or a dot, digits, then the zone
    AND (substr(ship_date, 20) GLOB '[Zz+-]*' OR (substr(ship_date, 20) GLOB '.[0-9]*' AND ltrim(substr(ship_date, 21), '0123456789') GLOB '[Zz+-]*'))
    -- the zone: Z, ±HH, ±HHMM or ±HH:MM, its minutes 00–59
    AND (ltrim(substr(ship_date, 20), '.0123456789') IN ('Z', 'z') OR ltrim(substr(ship_date, 20), '.0123456789') GLOB '[+-][0-9][0-9]' OR ltrim(substr(ship_date, 20), '.0123456789') GLOB '[+-][0-9][0-9][0-5][0-9]' OR ltrim(substr(ship_date, 20), '.0123456789') GLOB '[+-][0-9][0-9]:[0-5][0-9]')
  THEN
    -- a real calendar day
    date(substr(ship_date, 1, 10)) IS substr(ship_date, 1, 10)
    -- a zone within a day
    AND substr(ltrim(substr(ship_date, 20), '.0123456789'), 2, 2) <= '23'
    -- a clock time
    AND ((substr(ship_date, 12, 2) <= '23' AND substr(ship_date, 15, 2) <= '59' AND substr(ship_date, 18, 2) <= '59')
      -- or a leap second: up to :60 in the last minute of the UTC day, as the validator computes it
      OR (substr(ship_date, 18, 2) <= '60'
        AND CAST(substr(ship_date, 15, 2) AS INTEGER) - (CASE WHEN ltrim(substr(ship_date, 20), '.0123456789') LIKE '-%' THEN -1 ELSE 1 END) * CAST('0' || substr(replace(ltrim(substr(ship_date, 20), '.0123456789'), ':', ''), 4, 2) AS INTEGER) IN (59, -1)
        AND CAST(substr(ship_date, 12, 2) AS INTEGER) * 60 + CAST(substr(ship_date, 15, 2) AS INTEGER) - (CASE WHEN ltrim(substr(ship_date, 20), '.0123456789') LIKE '-%' THEN -1 ELSE 1 END) * (CAST('0' || substr(ltrim(substr(ship_date, 20), '.0123456789'), 2, 2) AS INTEGER) * 60 + CAST('0' || substr(replace(ltrim(substr(ship_date, 20), '.0123456789'), ':', ''), 4, 2) AS INTEGER)) IN (1439, -1)))
  ELSE FALSE END),
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
      INSERT INTO orders_next (id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at, ship_at) SELECT id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at, ship_at FROM orders;
      DROP TABLE orders;
      ALTER TABLE orders_next RENAME TO orders;
      
      CREATE INDEX orders_page ON orders (status, complete, id, ship_at) WHERE status <> 'cancelled';
      CREATE INDEX orders_page_by_pet ON orders (pet_id, id) WHERE status <> 'cancelled';`,
  },
  {
    version: 6,
    name: 'the change feed',
    // The one writer commits events in seq order, so seq alone is the feed's order (AUTOINCREMENT:
    // a seq is never given twice, even after the newest events are removed). events_pruned_seq is
    // the last event a prune removed: a cursor before it has lost events. events_from holds back,
    // while an import publishes in slices, every event from its first on (./store.ts).
    sql: String.raw`
      CREATE TABLE order_events (
        seq         INTEGER PRIMARY KEY AUTOINCREMENT,
        type        TEXT    NOT NULL
                            CONSTRAINT order_event_type_known CHECK (type IN ('order.created', 'order.shipped', 'order.cancelled')),
        order_id    INTEGER NOT NULL,
        status      TEXT    CONSTRAINT order_event_status CHECK ((type = 'order.cancelled') = (status IS NULL)),
        occurred_at TEXT    NOT NULL
      ) STRICT;
      ALTER TABLE store_meta ADD COLUMN events_pruned_seq INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE import_publishing ADD COLUMN events_from INTEGER NOT NULL DEFAULT 0;
    `,
  },
  { version: 7, ...KEY_EXPIRY_AND_ROTATION },
  { version: 8, ...KEY_SCOPES },
  { version: 9, ...keyRateLimits(sqliteDialect) },
  { version: 10, ...idempotencyKeys(sqliteDialect) },
  { version: 11, ...eventCompleteness('INTEGER CONSTRAINT order_event_complete_boolean CHECK (complete IN (0, 1))') },
  { version: 12, ...webhookTables(sqliteDialect) },
  {
    version: 13,
    name: 'CHECKs of a few values without a list',
    // SQLite makes the values of an IN list of three or more into a table, and in a CHECK it makes
    // that table again for every row written: an import paid it twice an order, for the order's
    // status and its event's type (docs/performance-log.md), and each delivery attempt once. The
    // same verdicts with OR, whose terms it tests in place; every row passes them already. Rebuilds
    // the three tables as 5 did `orders`, and keeps the feed's last given seq, which a pruned feed
    // may hold above its newest event. The ship date CHECK is 5's, as shipDateRule spells it.
    sql: String.raw`
      CREATE TABLE orders_next (
        id           INTEGER PRIMARY KEY CONSTRAINT order_id_safe CHECK (id BETWEEN -9007199254740991 AND 9007199254740991),
        pet_id       INTEGER NOT NULL CONSTRAINT order_pet_id_safe CHECK (pet_id BETWEEN -9007199254740991 AND 9007199254740991),
        quantity     INTEGER NOT NULL CONSTRAINT order_quantity_range CHECK (quantity BETWEEN 1 AND 9007199254740991),
        ship_date    TEXT    NOT NULL CONSTRAINT order_ship_date_rfc3339 CHECK ${shipDateRule('ship_date', sqliteDialect)},
        complete     INTEGER NOT NULL CONSTRAINT order_complete_boolean CHECK (complete IN (0, 1)),
        status       TEXT    NOT NULL DEFAULT 'pending'
                             CONSTRAINT order_status_known CHECK (status = 'pending' OR status = 'shipped' OR status = 'cancelled'),
        created_at   TEXT    NOT NULL,
        shipped_at   TEXT,
        cancelled_at TEXT,
        ship_at      TEXT    NOT NULL,
        CONSTRAINT order_cancelled_at CHECK ((status = 'cancelled') = (cancelled_at IS NOT NULL)),
        CONSTRAINT order_shipped_at CHECK ((status = 'shipped') = (shipped_at IS NOT NULL))
      ) STRICT;
      INSERT INTO orders_next (id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at, ship_at) SELECT id, pet_id, quantity, ship_date, complete, status, created_at, shipped_at, cancelled_at, ship_at FROM orders;
      DROP TABLE orders;
      ALTER TABLE orders_next RENAME TO orders;
      CREATE INDEX orders_page ON orders (status, complete, id, ship_at) WHERE status <> 'cancelled';
      CREATE INDEX orders_page_by_pet ON orders (pet_id, id) WHERE status <> 'cancelled';

      CREATE TABLE order_events_next (
        seq         INTEGER PRIMARY KEY AUTOINCREMENT,
        type        TEXT    NOT NULL
                            CONSTRAINT order_event_type_known CHECK (type = 'order.created' OR type = 'order.shipped' OR type = 'order.cancelled'),
        order_id    INTEGER NOT NULL,
        status      TEXT    CONSTRAINT order_event_status CHECK ((type = 'order.cancelled') = (status IS NULL)),
        occurred_at TEXT    NOT NULL,
        complete    INTEGER CONSTRAINT order_event_complete_boolean CHECK (complete IN (0, 1))
      ) STRICT;
      INSERT INTO sqlite_sequence (name, seq) SELECT 'order_events_next', seq FROM sqlite_sequence WHERE name = 'order_events';
      INSERT INTO order_events_next (seq, type, order_id, status, occurred_at, complete) SELECT seq, type, order_id, status, occurred_at, complete FROM order_events;
      DROP TABLE order_events;
      ALTER TABLE order_events_next RENAME TO order_events;

      CREATE TABLE webhook_attempts_next (
        seq         INTEGER PRIMARY KEY,
        endpoint_id TEXT NOT NULL,
        event_id    TEXT NOT NULL,
        attempt     INTEGER NOT NULL,
        at          TEXT NOT NULL,
        status      INTEGER,
        error       TEXT,
        duration_ms REAL NOT NULL,
        outcome     TEXT NOT NULL
                    CONSTRAINT webhook_attempt_outcome CHECK (outcome = 'delivered' OR outcome = 'retrying' OR outcome = 'failed' OR outcome = 'refused')
      ) STRICT;
      INSERT INTO webhook_attempts_next SELECT * FROM webhook_attempts;
      DROP TABLE webhook_attempts;
      ALTER TABLE webhook_attempts_next RENAME TO webhook_attempts;
      CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts (endpoint_id, seq);
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
