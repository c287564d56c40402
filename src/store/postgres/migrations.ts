import type { PoolClient } from 'pg';
import { DATE_TIME_DIGITS, instantKeySql } from '../date-time-sql';
import { migrate, type Migration } from '../migration';
import { PAGE_INDEXES_SQL, metaAndKeysSql, orderEventsTableSql, ordersTableSql } from '../sql';
import { firstShipDateShape, shipDateCheck, shipDateRefusal } from '../sql';
import { postgresConnection, postgresDialect } from './dialect';

const dialect = postgresDialect;
const SHIP_DATE_RFC3339 = shipDateCheck(dialect);

/**
 * The PostgreSQL schema history, applied in order. A migration that has shipped does what it did:
 * 2 writes the ship date's CHECK from today's shipDateRule, which accepts exactly what its first
 * text did (tests/date-time-check.test.ts holds both to the contract's validator).
 */
export const PG_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'orders and api keys',
    sql: `
      ${ordersTableSql(dialect, 'orders', firstShipDateShape(dialect))};
      CREATE INDEX orders_listed ON orders (id) WHERE status <> 'cancelled';
      CREATE INDEX orders_pet_id ON orders (pet_id) WHERE status <> 'cancelled';
      ${metaAndKeysSql(dialect)}
    `,
  },
  {
    version: 2,
    name: 'ship dates are RFC 3339 date-times',
    refuseWhile: shipDateRefusal(dialect),
    sql: `ALTER TABLE orders DROP CONSTRAINT order_ship_date_shape, ADD CONSTRAINT ${SHIP_DATE_RFC3339};`,
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
  {
    version: 4,
    name: 'the ship date rule, readable',
    // A database made before this release has the rule's first text, the same verdicts written as a
    // 60-line nest of CASE and substr: it gets today's, which a person can read. Every row passes
    // it already (migration 2 saw to that); it is checked once more as it is added.
    sql: `ALTER TABLE orders DROP CONSTRAINT order_ship_date_rfc3339, ADD CONSTRAINT ${SHIP_DATE_RFC3339};`,
  },
  {
    version: 5,
    name: 'the change feed',
    // Each event records its transaction's id (xid); the feed is ordered by (xid, seq), and a
    // reader sees only the events of transactions older than every one still running (see
    // SETTLED in ./events.ts). The key serves that order. events_pruned_xid and
    // events_pruned_seq are the last event a prune removed: a cursor before it has lost events.
    sql: `
      ${orderEventsTableSql(
        dialect,
        `xid         xid8    NOT NULL DEFAULT pg_current_xact_id(),
        seq         BIGINT  GENERATED ALWAYS AS IDENTITY,
        PRIMARY KEY (xid, seq)`,
      )};
      ALTER TABLE store_meta
        ADD COLUMN events_pruned_xid xid8   NOT NULL DEFAULT '0',
        ADD COLUMN events_pruned_seq BIGINT NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 6,
    name: 'ship instants written by the store',
    // ship_at is written by the store from the ship date (instantKey), as SQLite's is: as a
    // generated column PostgreSQL computed it row by row inside an import's one statement, about a
    // third of the move's time (docs/performance-log.md). The values stay; dropping the expression
    // rewrites nothing. Every row has one: the ship date's CHECK refuses a date without its digits.
    // The feed's sequence hands each connection a thousand numbers at a time: an event's place is
    // (xid, seq), so a seq needs only to grow within a transaction, and an import numbers a million.
    sql: `
      ALTER TABLE orders ALTER COLUMN ship_at DROP EXPRESSION, ALTER COLUMN ship_at SET NOT NULL;
      ALTER TABLE order_events ALTER COLUMN seq SET CACHE 1000;
    `,
  },
  {
    version: 7,
    name: 'the ship date rule takes its usual forms with one regular expression',
    // The same verdicts (tests/date-time-check.test.ts), spelled for an import's per-row cost: one
    // regular expression takes the usual forms with their ranges and month lengths, instead of the
    // shape's and then the calendar's checks (postgresDialect's usualForms). Checked once more as
    // it is added, like migration 4.
    sql: `ALTER TABLE orders DROP CONSTRAINT order_ship_date_rfc3339, ADD CONSTRAINT ${SHIP_DATE_RFC3339};`,
  },
];

/**
 * Applies every migration newer than the database's (../migration.ts) in one transaction, under
 * an advisory lock held until it commits, so that several instances starting at once apply each
 * migration once.
 */
export async function migratePostgres(client: PoolClient, migrations: readonly Migration[] = PG_MIGRATIONS): Promise<void> {
  await migrate(postgresConnection(client), postgresDialect, migrations);
}
