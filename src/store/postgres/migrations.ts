import type { PoolClient } from 'pg';
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
import { postgresConnection, postgresDialect } from './dialect';

/**
 * The PostgreSQL schema history, applied in order, each migration as the literal SQL it runs: a
 * migration that has shipped is a record, and never changes (tests/store/migrations.test.ts holds
 * each one's text to its digest). A new schema change is a new migration at the end. Its ship
 * date CHECKs (2, 4 and 7) are the contract's rule as shipDateRule spelled it then
 * (../date-time-sql.ts), each accepting exactly what the one before did.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'orders and api keys',
    sql: String.raw`
      CREATE TABLE orders (
        id           BIGINT PRIMARY KEY CONSTRAINT order_id_safe CHECK (id BETWEEN -9007199254740991 AND 9007199254740991),
        pet_id       BIGINT NOT NULL CONSTRAINT order_pet_id_safe CHECK (pet_id BETWEEN -9007199254740991 AND 9007199254740991),
        quantity     BIGINT NOT NULL CONSTRAINT order_quantity_range CHECK (quantity BETWEEN 1 AND 9007199254740991),
        ship_date    TEXT    NOT NULL CONSTRAINT order_ship_date_shape CHECK (length(ship_date) BETWEEN 19 AND 64 AND ship_date ~ '^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][Tt ][0-9][0-9]:[0-9][0-9]:[0-9][0-9].*$'),
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
      violationsSql: String.raw`SELECT id FROM orders WHERE NOT (CASE
  -- the usual forms, decided at once: YYYY-MM-DDTHH:MM:SSZ, and with milliseconds
  WHEN ship_date ~ '^[0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|[12][0-9]))T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{3})?Z$'
  THEN (substr(ship_date, 6, 5) <> '02-29' OR (CAST(substr(ship_date, 1, 4) AS INTEGER) % 4 = 0 AND (CAST(substr(ship_date, 1, 4) AS INTEGER) % 100 <> 0 OR CAST(substr(ship_date, 1, 4) AS INTEGER) % 400 = 0)))
  -- any other
  WHEN length(ship_date) BETWEEN 20 AND 64
    -- YYYY-MM-DD?HH:MM:SS
    AND substr(ship_date, 1, 19) ~ '^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$'
    -- between date and time: T, t or whitespace (JavaScript's \s)
    AND strpos(chr(84) || chr(116) || chr(9) || chr(10) || chr(11) || chr(12) || chr(13) || chr(32) || chr(160) || chr(5760) || chr(8192) || chr(8193) || chr(8194) || chr(8195) || chr(8196) || chr(8197) || chr(8198) || chr(8199) || chr(8200) || chr(8201) || chr(8202) || chr(8232) || chr(8233) || chr(8239) || chr(8287) || chr(12288) || chr(65279), substr(ship_date, 11, 1)) > 0
    -- after the seconds: the zone at once, or a dot, digits, then the zone
    AND (substr(ship_date, 20) ~ '^[Zz+-].*$' OR (substr(ship_date, 20) ~ '^\.[0-9].*$' AND ltrim(substr(ship_date, 21), '0123456789') ~ '^[Zz+-].*$'))
    -- the zone: Z, ±HH, ±HHMM or ±HH:MM, its minutes 00–59
    AND (ltrim(substr(ship_date, 20), '.0123456789') IN ('Z', 'z') OR ltrim(substr(ship_date, 20), '.0123456789') ~ '^[+-][0-9][0-9]$' OR ltrim(substr(ship_date, 20), '.0123456789') ~ '^[+-][0-9][0-9][0-5][0-9]$' OR ltrim(substr(ship_date, 20), '.0123456789') ~ '^[+-][0-9][0-9]:[0-5][0-9]$')
  THEN
    -- a real calendar day
    (substr(substr(ship_date, 1, 10), 6, 2) BETWEEN '01' AND '12'
      AND substr(substr(ship_date, 1, 10), 9, 2) BETWEEN '01' AND substr('312931303130313130313031', 2 * CAST(substr(substr(ship_date, 1, 10), 6, 2) AS INTEGER) - 1, 2)
      AND (substr(substr(ship_date, 1, 10), 6, 5) <> '02-29' OR (CAST(substr(substr(ship_date, 1, 10), 1, 4) AS INTEGER) % 4 = 0 AND (CAST(substr(substr(ship_date, 1, 10), 1, 4) AS INTEGER) % 100 <> 0 OR CAST(substr(substr(ship_date, 1, 10), 1, 4) AS INTEGER) % 400 = 0))))
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
    sql: String.raw`ALTER TABLE orders DROP CONSTRAINT order_ship_date_shape, ADD CONSTRAINT order_ship_date_rfc3339 CHECK (CASE
  -- the usual forms, decided at once: YYYY-MM-DDTHH:MM:SSZ, and with milliseconds
  WHEN ship_date ~ '^[0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|[12][0-9]))T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{3})?Z$'
  THEN (substr(ship_date, 6, 5) <> '02-29' OR (CAST(substr(ship_date, 1, 4) AS INTEGER) % 4 = 0 AND (CAST(substr(ship_date, 1, 4) AS INTEGER) % 100 <> 0 OR CAST(substr(ship_date, 1, 4) AS INTEGER) % 400 = 0)))
  -- any other
  WHEN length(ship_date) BETWEEN 20 AND 64
    -- YYYY-MM-DD?HH:MM:SS
    AND substr(ship_date, 1, 19) ~ '^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$'
    -- between date and time: T, t or whitespace (JavaScript's \s)
    AND strpos(chr(84) || chr(116) || chr(9) || chr(10) || chr(11) || chr(12) || chr(13) || chr(32) || chr(160) || chr(5760) || chr(8192) || chr(8193) || chr(8194) || chr(8195) || chr(8196) || chr(8197) || chr(8198) || chr(8199) || chr(8200) || chr(8201) || chr(8202) || chr(8232) || chr(8233) || chr(8239) || chr(8287) || chr(12288) || chr(65279), substr(ship_date, 11, 1)) > 0
    -- after the seconds: the zone at once, or a dot, digits, then the zone
    AND (substr(ship_date, 20) ~ '^[Zz+-].*$' OR (substr(ship_date, 20) ~ '^\.[0-9].*$' AND ltrim(substr(ship_date, 21), '0123456789') ~ '^[Zz+-].*$'))
    -- the zone: Z, ±HH, ±HHMM or ±HH:MM, its minutes 00–59
    AND (ltrim(substr(ship_date, 20), '.0123456789') IN ('Z', 'z') OR ltrim(substr(ship_date, 20), '.0123456789') ~ '^[+-][0-9][0-9]$' OR ltrim(substr(ship_date, 20), '.0123456789') ~ '^[+-][0-9][0-9][0-5][0-9]$' OR ltrim(substr(ship_date, 20), '.0123456789') ~ '^[+-][0-9][0-9]:[0-5][0-9]$')
  THEN
    -- a real calendar day
    (substr(substr(ship_date, 1, 10), 6, 2) BETWEEN '01' AND '12'
      AND substr(substr(ship_date, 1, 10), 9, 2) BETWEEN '01' AND substr('312931303130313130313031', 2 * CAST(substr(substr(ship_date, 1, 10), 6, 2) AS INTEGER) - 1, 2)
      AND (substr(substr(ship_date, 1, 10), 6, 5) <> '02-29' OR (CAST(substr(substr(ship_date, 1, 10), 1, 4) AS INTEGER) % 4 = 0 AND (CAST(substr(substr(ship_date, 1, 10), 1, 4) AS INTEGER) % 100 <> 0 OR CAST(substr(substr(ship_date, 1, 10), 1, 4) AS INTEGER) % 400 = 0))))
    -- a zone within a day
    AND substr(ltrim(substr(ship_date, 20), '.0123456789'), 2, 2) <= '23'
    -- a clock time
    AND ((substr(ship_date, 12, 2) <= '23' AND substr(ship_date, 15, 2) <= '59' AND substr(ship_date, 18, 2) <= '59')
      -- or a leap second: up to :60 in the last minute of the UTC day, as the validator computes it
      OR (substr(ship_date, 18, 2) <= '60'
        AND CAST(substr(ship_date, 15, 2) AS INTEGER) - (CASE WHEN ltrim(substr(ship_date, 20), '.0123456789') LIKE '-%' THEN -1 ELSE 1 END) * CAST('0' || substr(replace(ltrim(substr(ship_date, 20), '.0123456789'), ':', ''), 4, 2) AS INTEGER) IN (59, -1)
        AND CAST(substr(ship_date, 12, 2) AS INTEGER) * 60 + CAST(substr(ship_date, 15, 2) AS INTEGER) - (CASE WHEN ltrim(substr(ship_date, 20), '.0123456789') LIKE '-%' THEN -1 ELSE 1 END) * (CAST('0' || substr(ltrim(substr(ship_date, 20), '.0123456789'), 2, 2) AS INTEGER) * 60 + CAST('0' || substr(replace(ltrim(substr(ship_date, 20), '.0123456789'), ':', ''), 4, 2) AS INTEGER)) IN (1439, -1)))
  ELSE FALSE END);`,
  },
  {
    version: 3,
    name: 'ship instants and the indexes of paged lists; a secret for cursors',
    // Generated from the ship date, so that no writer can store one that disagrees with it; the
    // "C" collation compares the keys byte by byte, as instantKey orders them. A ship date without
    // the digits of a date-time (which its CHECK then refuses, under its own name) has none, rather
    // than failing a cast first: one regular expression, not the CHECK's whole rule a second time.
    sql: String.raw`
      ALTER TABLE orders ADD COLUMN ship_at TEXT COLLATE "C" GENERATED ALWAYS AS (
        CASE WHEN ship_date ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}.[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}(:?[0-9]{2})?)$' THEN (CAST(((((CAST(substr(ship_date, 1, 4) AS BIGINT) + 400 - (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) <= 2 THEN 1 ELSE 0 END)) / 400) * 146097 + ((CAST(substr(ship_date, 1, 4) AS BIGINT) + 400 - (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) <= 2 THEN 1 ELSE 0 END)) - ((CAST(substr(ship_date, 1, 4) AS BIGINT) + 400 - (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) <= 2 THEN 1 ELSE 0 END)) / 400) * 400) * 365 + ((CAST(substr(ship_date, 1, 4) AS BIGINT) + 400 - (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) <= 2 THEN 1 ELSE 0 END)) - ((CAST(substr(ship_date, 1, 4) AS BIGINT) + 400 - (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) <= 2 THEN 1 ELSE 0 END)) / 400) * 400) / 4 - ((CAST(substr(ship_date, 1, 4) AS BIGINT) + 400 - (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) <= 2 THEN 1 ELSE 0 END)) - ((CAST(substr(ship_date, 1, 4) AS BIGINT) + 400 - (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) <= 2 THEN 1 ELSE 0 END)) / 400) * 400) / 100 + ((153 * (CAST(substr(ship_date, 6, 2) AS BIGINT) + (CASE WHEN CAST(substr(ship_date, 6, 2) AS BIGINT) > 2 THEN -3 ELSE 9 END)) + 2) / 5 + CAST(substr(ship_date, 9, 2) AS BIGINT) - 1)) * 86400 + CAST(substr(ship_date, 12, 2) AS BIGINT) * 3600 + CAST(substr(ship_date, 15, 2) AS BIGINT) * 60 + CAST(substr(ship_date, 18, 2) AS BIGINT) - (CASE WHEN substr(ship_date, length(ship_date) - (CASE WHEN substr(ship_date, length(ship_date), 1) IN ('Z', 'z') THEN 1
    WHEN substr(ship_date, length(ship_date) - 2, 1) IN ('+', '-') THEN 3 WHEN substr(ship_date, length(ship_date) - 4, 1) IN ('+', '-') THEN 5 ELSE 6 END) + 1, 1) = '-' THEN -1 ELSE 1 END) * ((CASE WHEN (CASE WHEN substr(ship_date, length(ship_date), 1) IN ('Z', 'z') THEN 1
    WHEN substr(ship_date, length(ship_date) - 2, 1) IN ('+', '-') THEN 3 WHEN substr(ship_date, length(ship_date) - 4, 1) IN ('+', '-') THEN 5 ELSE 6 END) > 1 THEN CAST(substr(ship_date, length(ship_date) - (CASE WHEN substr(ship_date, length(ship_date), 1) IN ('Z', 'z') THEN 1
    WHEN substr(ship_date, length(ship_date) - 2, 1) IN ('+', '-') THEN 3 WHEN substr(ship_date, length(ship_date) - 4, 1) IN ('+', '-') THEN 5 ELSE 6 END) + 2, 2) AS BIGINT) ELSE 0 END) * 3600 + (CASE WHEN (CASE WHEN substr(ship_date, length(ship_date), 1) IN ('Z', 'z') THEN 1
    WHEN substr(ship_date, length(ship_date) - 2, 1) IN ('+', '-') THEN 3 WHEN substr(ship_date, length(ship_date) - 4, 1) IN ('+', '-') THEN 5 ELSE 6 END) > 3 THEN CAST(substr(ship_date, length(ship_date) - 1, 2) AS BIGINT) ELSE 0 END) * 60) + 100000000000) AS TEXT) || '.' || (CASE WHEN substr(ship_date, 20, 1) = '.' THEN rtrim(substr(ship_date, 21, length(ship_date) - 20 - (CASE WHEN substr(ship_date, length(ship_date), 1) IN ('Z', 'z') THEN 1
    WHEN substr(ship_date, length(ship_date) - 2, 1) IN ('+', '-') THEN 3 WHEN substr(ship_date, length(ship_date) - 4, 1) IN ('+', '-') THEN 5 ELSE 6 END)), '0') ELSE '' END)) END) STORED;
      DROP INDEX orders_pet_id;
      
      CREATE INDEX orders_page ON orders (status, complete, id, ship_at) WHERE status <> 'cancelled';
      CREATE INDEX orders_page_by_pet ON orders (pet_id, id) WHERE status <> 'cancelled';
      ALTER TABLE store_meta ADD COLUMN cursor_secret TEXT;
    `,
  },
  {
    version: 4,
    name: 'the ship date rule, readable',
    // A database made before this release has the rule's first text, the same verdicts written as a
    // 60-line nest of CASE and substr: it gets today's, which a person can read. Every row passes
    // it already (migration 2 saw to that); it is checked once more as it is added.
    sql: String.raw`ALTER TABLE orders DROP CONSTRAINT order_ship_date_rfc3339, ADD CONSTRAINT order_ship_date_rfc3339 CHECK (CASE
  -- the usual forms, decided at once: YYYY-MM-DDTHH:MM:SSZ, and with milliseconds
  WHEN ship_date ~ '^[0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|[12][0-9]))T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{3})?Z$'
  THEN (substr(ship_date, 6, 5) <> '02-29' OR (CAST(substr(ship_date, 1, 4) AS INTEGER) % 4 = 0 AND (CAST(substr(ship_date, 1, 4) AS INTEGER) % 100 <> 0 OR CAST(substr(ship_date, 1, 4) AS INTEGER) % 400 = 0)))
  -- any other
  WHEN length(ship_date) BETWEEN 20 AND 64
    -- YYYY-MM-DD?HH:MM:SS
    AND substr(ship_date, 1, 19) ~ '^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$'
    -- between date and time: T, t or whitespace (JavaScript's \s)
    AND strpos(chr(84) || chr(116) || chr(9) || chr(10) || chr(11) || chr(12) || chr(13) || chr(32) || chr(160) || chr(5760) || chr(8192) || chr(8193) || chr(8194) || chr(8195) || chr(8196) || chr(8197) || chr(8198) || chr(8199) || chr(8200) || chr(8201) || chr(8202) || chr(8232) || chr(8233) || chr(8239) || chr(8287) || chr(12288) || chr(65279), substr(ship_date, 11, 1)) > 0
    -- after the seconds: the zone at once, or a dot, digits, then the zone
    AND (substr(ship_date, 20) ~ '^[Zz+-].*$' OR (substr(ship_date, 20) ~ '^\.[0-9].*$' AND ltrim(substr(ship_date, 21), '0123456789') ~ '^[Zz+-].*$'))
    -- the zone: Z, ±HH, ±HHMM or ±HH:MM, its minutes 00–59
    AND (ltrim(substr(ship_date, 20), '.0123456789') IN ('Z', 'z') OR ltrim(substr(ship_date, 20), '.0123456789') ~ '^[+-][0-9][0-9]$' OR ltrim(substr(ship_date, 20), '.0123456789') ~ '^[+-][0-9][0-9][0-5][0-9]$' OR ltrim(substr(ship_date, 20), '.0123456789') ~ '^[+-][0-9][0-9]:[0-5][0-9]$')
  THEN
    -- a real calendar day
    (substr(substr(ship_date, 1, 10), 6, 2) BETWEEN '01' AND '12'
      AND substr(substr(ship_date, 1, 10), 9, 2) BETWEEN '01' AND substr('312931303130313130313031', 2 * CAST(substr(substr(ship_date, 1, 10), 6, 2) AS INTEGER) - 1, 2)
      AND (substr(substr(ship_date, 1, 10), 6, 5) <> '02-29' OR (CAST(substr(substr(ship_date, 1, 10), 1, 4) AS INTEGER) % 4 = 0 AND (CAST(substr(substr(ship_date, 1, 10), 1, 4) AS INTEGER) % 100 <> 0 OR CAST(substr(substr(ship_date, 1, 10), 1, 4) AS INTEGER) % 400 = 0))))
    -- a zone within a day
    AND substr(ltrim(substr(ship_date, 20), '.0123456789'), 2, 2) <= '23'
    -- a clock time
    AND ((substr(ship_date, 12, 2) <= '23' AND substr(ship_date, 15, 2) <= '59' AND substr(ship_date, 18, 2) <= '59')
      -- or a leap second: up to :60 in the last minute of the UTC day, as the validator computes it
      OR (substr(ship_date, 18, 2) <= '60'
        AND CAST(substr(ship_date, 15, 2) AS INTEGER) - (CASE WHEN ltrim(substr(ship_date, 20), '.0123456789') LIKE '-%' THEN -1 ELSE 1 END) * CAST('0' || substr(replace(ltrim(substr(ship_date, 20), '.0123456789'), ':', ''), 4, 2) AS INTEGER) IN (59, -1)
        AND CAST(substr(ship_date, 12, 2) AS INTEGER) * 60 + CAST(substr(ship_date, 15, 2) AS INTEGER) - (CASE WHEN ltrim(substr(ship_date, 20), '.0123456789') LIKE '-%' THEN -1 ELSE 1 END) * (CAST('0' || substr(ltrim(substr(ship_date, 20), '.0123456789'), 2, 2) AS INTEGER) * 60 + CAST('0' || substr(replace(ltrim(substr(ship_date, 20), '.0123456789'), ':', ''), 4, 2) AS INTEGER)) IN (1439, -1)))
  ELSE FALSE END);`,
  },
  {
    version: 5,
    name: 'the change feed',
    // Each event records its transaction's id (xid); the feed is ordered by (xid, seq), and a
    // reader sees only the events of transactions older than every one still running (see
    // SETTLED in ./events.ts). The key serves that order. events_pruned_xid and
    // events_pruned_seq are the last event a prune removed: a cursor before it has lost events.
    sql: String.raw`
      CREATE TABLE order_events (
        xid         xid8    NOT NULL DEFAULT pg_current_xact_id(),
        seq         BIGINT  GENERATED ALWAYS AS IDENTITY,
        PRIMARY KEY (xid, seq),
        type        TEXT    NOT NULL
                            CONSTRAINT order_event_type_known CHECK (type IN ('order.created', 'order.shipped', 'order.cancelled')),
        order_id    BIGINT  NOT NULL,
        status      TEXT    CONSTRAINT order_event_status CHECK ((type = 'order.cancelled') = (status IS NULL)),
        occurred_at TEXT    NOT NULL
      );
      ALTER TABLE store_meta
        ADD COLUMN events_pruned_xid xid8   NOT NULL DEFAULT '0',
        ADD COLUMN events_pruned_seq BIGINT NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 6,
    name: 'ship instants written by the store',
    // ship_at is written by the store from the ship date (instantKey), as SQLite's is: as a
    // generated column PostgreSQL computed it row by row inside an import's one statement, a large
    // share of the move's time (docs/performance-log.md). The values stay; dropping the expression
    // rewrites nothing. Every row has one: the ship date's CHECK refuses a date without its digits.
    // The feed's sequence hands each connection a thousand numbers at a time: an event's place is
    // (xid, seq), so a seq needs only to grow within a transaction, and an import numbers a million.
    sql: String.raw`
      ALTER TABLE orders ALTER COLUMN ship_at DROP EXPRESSION, ALTER COLUMN ship_at SET NOT NULL;
      ALTER TABLE order_events ALTER COLUMN seq SET CACHE 1000;
    `,
  },
  {
    version: 7,
    name: 'the ship date rule takes its usual forms with one regular expression',
    // The same verdicts (tests/store/date-time-check.test.ts), spelled for an import's per-row cost: one
    // regular expression takes the usual forms with their ranges and month lengths, instead of the
    // shape's and then the calendar's checks (postgresDialect's usualForms). Checked once more as
    // it is added, like migration 4.
    sql: String.raw`ALTER TABLE orders DROP CONSTRAINT order_ship_date_rfc3339, ADD CONSTRAINT order_ship_date_rfc3339 CHECK (CASE
  -- the usual forms, decided at once: YYYY-MM-DDTHH:MM:SSZ, and with milliseconds
  WHEN ship_date ~ '^[0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|[12][0-9]))T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{3})?Z$'
  THEN (substr(ship_date, 6, 5) <> '02-29' OR (CAST(substr(ship_date, 1, 4) AS INTEGER) % 4 = 0 AND (CAST(substr(ship_date, 1, 4) AS INTEGER) % 100 <> 0 OR CAST(substr(ship_date, 1, 4) AS INTEGER) % 400 = 0)))
  -- any other
  WHEN length(ship_date) BETWEEN 20 AND 64
    -- YYYY-MM-DD?HH:MM:SS
    AND substr(ship_date, 1, 19) ~ '^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$'
    -- between date and time: T, t or whitespace (JavaScript's \s)
    AND strpos(chr(84) || chr(116) || chr(9) || chr(10) || chr(11) || chr(12) || chr(13) || chr(32) || chr(160) || chr(5760) || chr(8192) || chr(8193) || chr(8194) || chr(8195) || chr(8196) || chr(8197) || chr(8198) || chr(8199) || chr(8200) || chr(8201) || chr(8202) || chr(8232) || chr(8233) || chr(8239) || chr(8287) || chr(12288) || chr(65279), substr(ship_date, 11, 1)) > 0
    -- after the seconds: the zone at once, or a dot, digits, then the zone
    AND (substr(ship_date, 20) ~ '^[Zz+-].*$' OR (substr(ship_date, 20) ~ '^\.[0-9].*$' AND ltrim(substr(ship_date, 21), '0123456789') ~ '^[Zz+-].*$'))
    -- the zone: Z, ±HH, ±HHMM or ±HH:MM, its minutes 00–59
    AND (ltrim(substr(ship_date, 20), '.0123456789') IN ('Z', 'z') OR ltrim(substr(ship_date, 20), '.0123456789') ~ '^[+-][0-9][0-9]$' OR ltrim(substr(ship_date, 20), '.0123456789') ~ '^[+-][0-9][0-9][0-5][0-9]$' OR ltrim(substr(ship_date, 20), '.0123456789') ~ '^[+-][0-9][0-9]:[0-5][0-9]$')
  THEN
    -- a real calendar day
    (substr(substr(ship_date, 1, 10), 6, 2) BETWEEN '01' AND '12'
      AND substr(substr(ship_date, 1, 10), 9, 2) BETWEEN '01' AND substr('312931303130313130313031', 2 * CAST(substr(substr(ship_date, 1, 10), 6, 2) AS INTEGER) - 1, 2)
      AND (substr(substr(ship_date, 1, 10), 6, 5) <> '02-29' OR (CAST(substr(substr(ship_date, 1, 10), 1, 4) AS INTEGER) % 4 = 0 AND (CAST(substr(substr(ship_date, 1, 10), 1, 4) AS INTEGER) % 100 <> 0 OR CAST(substr(substr(ship_date, 1, 10), 1, 4) AS INTEGER) % 400 = 0))))
    -- a zone within a day
    AND substr(ltrim(substr(ship_date, 20), '.0123456789'), 2, 2) <= '23'
    -- a clock time
    AND ((substr(ship_date, 12, 2) <= '23' AND substr(ship_date, 15, 2) <= '59' AND substr(ship_date, 18, 2) <= '59')
      -- or a leap second: up to :60 in the last minute of the UTC day, as the validator computes it
      OR (substr(ship_date, 18, 2) <= '60'
        AND CAST(substr(ship_date, 15, 2) AS INTEGER) - (CASE WHEN ltrim(substr(ship_date, 20), '.0123456789') LIKE '-%' THEN -1 ELSE 1 END) * CAST('0' || substr(replace(ltrim(substr(ship_date, 20), '.0123456789'), ':', ''), 4, 2) AS INTEGER) IN (59, -1)
        AND CAST(substr(ship_date, 12, 2) AS INTEGER) * 60 + CAST(substr(ship_date, 15, 2) AS INTEGER) - (CASE WHEN ltrim(substr(ship_date, 20), '.0123456789') LIKE '-%' THEN -1 ELSE 1 END) * (CAST('0' || substr(ltrim(substr(ship_date, 20), '.0123456789'), 2, 2) AS INTEGER) * 60 + CAST('0' || substr(replace(ltrim(substr(ship_date, 20), '.0123456789'), ':', ''), 4, 2) AS INTEGER)) IN (1439, -1)))
  ELSE FALSE END);`,
  },
  { version: 8, ...KEY_EXPIRY_AND_ROTATION },
  { version: 9, ...KEY_SCOPES },
  { version: 10, ...keyRateLimits(postgresDialect) },
  { version: 11, ...idempotencyKeys(postgresDialect) },
  { version: 12, ...eventCompleteness('BOOLEAN') },
  { version: 13, ...webhookTables(postgresDialect) },
  {
    version: 14,
    name: 'new orders at the end of the paged index',
    // PostgreSQL splits a full leaf page of a B-tree in halves, unless the new entry goes at the
    // index's end, where it fills the page. With status ascending, pending orders came before
    // shipped ones, so every new order (the largest id, pending, placed or imported) went into
    // the middle of orders_page, and each page it filled was left half full: 95 MB against the
    // primary key's 21 for 1,000,000 orders, and an import's costliest index. Descending, pending
    // orders come last and a new order is appended. Each page's branch reads it by equality on
    // its status (pageQuery), in id order, as before.
    sql: String.raw`
      DROP INDEX orders_page;
      CREATE INDEX orders_page ON orders (status DESC, complete, id, ship_at) WHERE status <> 'cancelled';
    `,
  },
];

/**
 * Applies every migration newer than the database's (../migration.ts) in one transaction, under
 * an advisory lock held until it commits, so that several instances starting at once apply each
 * migration once.
 */
export async function migrate(client: PoolClient, migrations: readonly Migration[] = MIGRATIONS): Promise<void> {
  await migrateWith(postgresConnection(client), postgresDialect, migrations);
}
