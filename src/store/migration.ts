import type { MaybePromise } from '../maybe-promise';
import { MigrationRefusedError, SchemaTooNewError } from './errors';
import { timestamp } from './core';
import { drive, statement, type Connection, type Dialect, type Steps, type SyncConnection } from './dialect';

/** One schema change; versions are applied in order, exactly once, and never edited once shipped. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /** Rows the new schema would refuse: while any exist, the migration refuses to apply and changes nothing. */
  readonly refuseWhile?: MigrationPrecondition;
}

/** A rule a migration adds, and how to find the rows that break it. */
export interface MigrationPrecondition {
  /** The rule, as an operator reads it. */
  readonly rule: string;
  /** `SELECT id FROM orders WHERE …` : the ids of the rows that break the rule. */
  readonly violationsSql: string;
}

/** What the stores' shipDate constraint requires, in the words of a migration's refusal. */
export const SHIP_DATE_RULE = 'shipDate must be an RFC 3339 date-time with a time zone, on a real calendar day';

/**
 * Key expiry and rotation, the same in every store's history (each gives it its own version).
 * expires_at: when a key stops working, as ISO 8601 UTC text like created_at; NULL, as for every key
 * made before, means never. previous_hash: the secret a rotation replaced, which keeps working until
 * previous_until (the grace), then fails as a revoked key.
 */
export const KEY_EXPIRY_AND_ROTATION = {
  name: 'key expiry and rotation',
  sql: String.raw`
      ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
      ALTER TABLE api_keys ADD COLUMN previous_hash TEXT;
      ALTER TABLE api_keys ADD COLUMN previous_until TEXT;
      CREATE UNIQUE INDEX api_keys_previous_hash ON api_keys (previous_hash);
    `,
} as const;

/**
 * Key scopes, the same in every store's history: what a key may do, as a space-separated list
 * (src/keys/scopes.ts). Every key made before gets orders:read and orders:cancel, all that any key
 * could do then.
 */
export const KEY_SCOPES = {
  name: 'key scopes',
  sql: String.raw`
      ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT 'orders:read orders:cancel';
    `,
} as const;

/**
 * Events keep the `complete` they showed, the same in every store's history (each spells its
 * column's type): shipping now fulfils an order, so the orders row's `complete` no longer says what
 * an earlier event of it said. Before this, no change of an order changed it, so every event
 * written so far showed its order's `complete` as it is now.
 */
export function eventCompleteness(columnType: string): { readonly name: string; readonly sql: string } {
  return {
    name: 'events keep the complete they showed',
    sql: `
      ALTER TABLE order_events ADD COLUMN complete ${columnType};
      UPDATE order_events SET complete = (SELECT o.complete FROM orders o WHERE o.id = order_events.order_id) WHERE status IS NOT NULL;
    `,
  };
}

/**
 * Key rate limits, the same in every store's history. rate_limit: the key's policies as text
 * (src/keys/rate-limit.ts), NULL for the deployment's (every key made before). key_usage: one row
 * per key that has been counted, with the start (seconds since the epoch, by the store's clock) and
 * the count of its current window of each unit, so that one statement counts a request against
 * every policy at once (sql.ts, RATE_SQL).
 */
export function keyRateLimits({ ddl }: Dialect): { readonly name: string; readonly sql: string } {
  const window = (unit: string) => `${unit}_start ${ddl.integer} NOT NULL, ${unit}_used ${ddl.integer} NOT NULL`;
  return {
    name: 'key rate limits',
    sql: `
      ALTER TABLE api_keys ADD COLUMN rate_limit TEXT;
      CREATE TABLE key_usage (
        key_name TEXT PRIMARY KEY,
        ${window('second')},
        ${window('minute')},
        ${window('hour')},
        ${window('day')}
      )${ddl.tableOptions};
    `,
  };
}

/**
 * The records of placements by Idempotency-Key, the same in every store's history: one per API key
 * and Idempotency-Key, with what identifies the request's body (its fingerprint), the order it
 * placed, the answer to replay (as the placement made it, opaque to the store) and when. A record
 * is written in the placement's own transaction, with its order and event; records older than the
 * deployment keeps them are pruned by created_at.
 */
export function idempotencyKeys({ ddl }: Dialect): { readonly name: string; readonly sql: string } {
  return {
    name: 'idempotency keys of placements',
    sql: `
      CREATE TABLE idempotency_keys (
        key_name    TEXT NOT NULL,
        idem_key    TEXT NOT NULL CONSTRAINT idempotency_key_length CHECK (length(idem_key) BETWEEN 1 AND 255),
        fingerprint TEXT NOT NULL,
        order_id    ${ddl.integer} NOT NULL,
        answer      TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (key_name, idem_key)
      )${ddl.tableOptions};
      CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
    `,
  };
}

/** How many offending ids a refusal names. */
export const REFUSAL_IDS = 10;

/** The table of applied migrations. */
function schemaMigrationsSql({ ddl }: Dialect): string {
  return `CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INTEGER PRIMARY KEY,
      name       TEXT NOT NULL,
      applied_at TEXT NOT NULL
    )${ddl.tableOptions}`;
}

/** Any 64-bit value; every process of petstore-orders agrees on it (PostgreSQL's advisory lock). */
const MIGRATION_LOCK = 0x70657473746f7265n; // "petstore"

/**
 * Applies every migration newer than the database's, in one exclusive transaction
 * (Connection.exclusively), so that several processes starting at once apply each migration once:
 * synchronously on a synchronous connection.
 */
export function migrate(connection: SyncConnection, dialect: Dialect, migrations: readonly Migration[]): void;
export function migrate(connection: Connection, dialect: Dialect, migrations: readonly Migration[]): MaybePromise<void>;
export function migrate(connection: Connection, dialect: Dialect, migrations: readonly Migration[]): MaybePromise<void> {
  return connection.exclusively(MIGRATION_LOCK, () => drive(migrationSteps(migrations, dialect), connection));
}

/**
 * The migration algorithm, for every dialect: create the history table, read the version, refuse
 * a database from a newer release, and for each newer migration refuse it while rows break its
 * rule (naming them), else apply and record it.
 */
function* migrationSteps(migrations: readonly Migration[], dialect: Dialect): Steps<void> {
  yield { run: statement(schemaMigrationsSql(dialect)) };
  const [history] = (yield { rows: statement('SELECT max(version) AS version FROM schema_migrations') }) ?? [];
  const current = Number(history?.version ?? 0);
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new SchemaTooNewError(`database schema version ${current} is newer than this release knows (${latest})`);
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    if (migration.refuseWhile) {
      const { violationsSql } = migration.refuseWhile;
      const [violations] = (yield { rows: statement(`SELECT count(*) AS count FROM (${violationsSql}) AS violations`) }) ?? [];
      const count = Number(violations?.count ?? 0);
      if (count > 0) {
        const rows = (yield { rows: statement(`${violationsSql} LIMIT ${REFUSAL_IDS}`) }) ?? [];
        throw new MigrationRefusedError(
          migration,
          rows.map((row) => Number(row.id)),
          count,
        );
      }
    }
    yield { run: statement(migration.sql) };
    yield {
      run: statement('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
        migration.version,
        migration.name,
        timestamp(),
      ]),
    };
  }
}
