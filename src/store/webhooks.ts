import { statement, type Dialect, type Row, type Statement } from './dialect';
import { StoreInvariantError } from './errors';
import type { AttemptOutcome, AttemptRecord, EndpointChanges, EndpointRecord, NewEndpoint, RetryRecord, WebhookEventType } from './types';

/** The event types an endpoint may ask for. */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = ['order.created', 'order.cancelled', 'order.shipped'];

// Webhook endpoints as every store keeps them: the table, the statements, and the lease that lets
// exactly one instance at a time deliver to an endpoint. Each statement stands alone, so that a
// delivery never holds a transaction (or a connection) while it waits on a receiver:
//
// - An instance takes an endpoint's lease (claim), for the seconds it asks of the database's clock,
//   and renews it while it delivers; every write a delivery makes holds only while its lease does,
//   so an instance that lost its lease (paused past it) can change nothing.
// - The endpoint's cursor is the feed position up to which every event has been sent or handed to
//   a retry. It moves only after the attempt's outcome is written, so a crash between an attempt
//   and its record sends that event again: at least once.
// - A failed event waits in webhook_retries for its next attempt; the cursor moves past it, so
//   one failing event holds back none after it.

/** The migration that adds webhook endpoints, their retries and their delivery log. */
export function webhookTables({ ddl }: Dialect): { readonly name: string; readonly sql: string } {
  return {
    name: 'webhook endpoints, their retries and their delivery log',
    sql: `
      CREATE TABLE webhook_endpoints (
        id              TEXT NOT NULL PRIMARY KEY,
        url             TEXT NOT NULL,
        event_types     TEXT,
        description     TEXT,
        status          TEXT NOT NULL CONSTRAINT webhook_endpoint_status CHECK (status IN ('enabled', 'disabled')),
        disabled_reason TEXT,
        secret          TEXT NOT NULL,
        previous_secret TEXT,
        previous_until  TEXT,
        created_at      TEXT NOT NULL,
        cursor_tx       TEXT NOT NULL,
        cursor_seq      ${ddl.integer} NOT NULL,
        failing_since   TEXT,
        lease_owner     TEXT,
        lease_until     ${ddl.integer}
      )${ddl.tableOptions};
      CREATE TABLE webhook_retries (
        endpoint_id TEXT NOT NULL,
        event_id    TEXT NOT NULL,
        body        TEXT NOT NULL,
        attempts    ${ddl.integer} NOT NULL,
        next_at     TEXT NOT NULL,
        PRIMARY KEY (endpoint_id, event_id)
      )${ddl.tableOptions};
      CREATE TABLE webhook_attempts (
        seq         ${ddl.serial} PRIMARY KEY,
        endpoint_id TEXT NOT NULL,
        event_id    TEXT NOT NULL,
        attempt     ${ddl.integer} NOT NULL,
        at          TEXT NOT NULL,
        status      ${ddl.integer},
        error       TEXT,
        duration_ms REAL NOT NULL,
        outcome     TEXT NOT NULL CONSTRAINT webhook_attempt_outcome CHECK (outcome IN ('delivered', 'retrying', 'failed', 'refused'))
      )${ddl.tableOptions};
      CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts (endpoint_id, seq);
    `,
  };
}

const ENDPOINT_COLUMNS = `id, url, event_types, description, status, disabled_reason, created_at, secret, previous_secret,
  previous_until, cursor_tx, cursor_seq, failing_since`;

/**
 * The webhook statements of a dialect. Each uses its placeholders once each, in order (SQLite binds
 * them by position), so a value needed twice is given twice. The lease's clock is the database's,
 * the same for every instance.
 */
export function webhookSql({ clock, ddl, eventPlace }: Dialect) {
  /** The endpoint (its id, then its holder, as the two placeholders that follow) is leased to that holder now. */
  const held = (id: string, owner: string) => `id = ${id} AND lease_owner = ${owner} AND lease_until >= ${clock}`;
  const claimable = `status = 'enabled' AND (lease_owner IS NULL OR lease_until < ${clock} OR lease_owner = `;
  return {
    create: `INSERT INTO webhook_endpoints (id, url, event_types, description, status, secret, created_at, cursor_tx, cursor_seq)
      VALUES ($1, $2, $3, $4, 'enabled', $5, $6, $7, $8)`,
    get: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1`,
    /** A page of endpoints in id order (ids sort as they were made), after `$1` ('' for the first). */
    page: `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id > $1 ORDER BY id LIMIT $2`,
    /**
     * Changes endpoint `$10`: its url to `$1` unless null; its event types to `$3` when `$2` is 1;
     * its description to `$5` when `$4` is 1; its status to `$9` (`$6`, `$7` and `$8` the same)
     * unless null. Enabling forgets its failures and why it was disabled.
     */
    update: `UPDATE webhook_endpoints SET url = COALESCE($1, url),
        event_types = CASE WHEN $2 = 1 THEN $3 ELSE event_types END,
        description = CASE WHEN $4 = 1 THEN $5 ELSE description END,
        disabled_reason = CASE WHEN $6 = 'enabled' THEN NULL WHEN $7 = 'disabled' AND status = 'enabled' THEN 'disabled by hand'
          ELSE disabled_reason END,
        failing_since = CASE WHEN $8 = 'enabled' THEN NULL ELSE failing_since END,
        status = COALESCE($9, status)
      WHERE id = $10 RETURNING ${ENDPOINT_COLUMNS}`,
    remove: 'DELETE FROM webhook_endpoints WHERE id = $1 RETURNING id',
    removeRetries: 'DELETE FROM webhook_retries WHERE endpoint_id = $1',
    removeAttempts: 'DELETE FROM webhook_attempts WHERE endpoint_id = $1',
    /** A new secret `$2` for endpoint `$3`; the current one signs beside it until `$1`. */
    rotate: `UPDATE webhook_endpoints SET previous_secret = secret, previous_until = $1, secret = $2 WHERE id = $3
      RETURNING ${ENDPOINT_COLUMNS}`,
    /**
     * Leases to `$1` (`$3`, `$5` the same) for `$2` seconds up to `$4` enabled endpoints: those
     * nobody holds, whose lease ran out, or that it holds already. The outer WHERE says it again,
     * so that of two instances claiming at once (PostgreSQL's READ COMMITTED re-checks a row
     * another changed meanwhile), one wins.
     */
    claim: `UPDATE webhook_endpoints SET lease_owner = $1, lease_until = ${clock} + $2
      WHERE id IN (SELECT id FROM webhook_endpoints WHERE ${claimable}$3) ORDER BY id LIMIT $4)
        AND ${claimable}$5)
      RETURNING ${ENDPOINT_COLUMNS}`,
    /** Renews for `$1` seconds the lease of endpoint `$2` held by `$3`, while it holds it and the endpoint is enabled. */
    renew: `UPDATE webhook_endpoints SET lease_until = ${clock} + $1 WHERE ${held('$2', '$3')} AND status = 'enabled'
      RETURNING lease_until - ${clock} AS "secondsLeft"`,
    release: 'UPDATE webhook_endpoints SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2',
    /**
     * Moves the cursor of endpoint `$3` to (`$1`, `$2`), while `$4` holds it and the cursor is still
     * at (`$5`, `$6`): a replay that moved it meanwhile is not undone.
     */
    advance: `UPDATE webhook_endpoints SET cursor_tx = $1, cursor_seq = $2 WHERE ${held('$3', '$4')} AND cursor_tx = $5 AND cursor_seq = $6
      RETURNING id`,
    /** A run of failures began at `$2` (`$1` the same) unless one has already begun, or ended (null), at endpoint `$3` while `$4` holds it. */
    failing: `UPDATE webhook_endpoints
      SET failing_since = CASE WHEN CAST($1 AS TEXT) IS NULL THEN NULL ELSE COALESCE(failing_since, CAST($2 AS TEXT)) END
      WHERE ${held('$3', '$4')} RETURNING failing_since AS "failingSince"`,
    /** Disables for reason `$1` endpoint `$2`, while `$3` holds it. */
    disable: `UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $1 WHERE ${held('$2', '$3')} RETURNING id`,
    /** At endpoint `$1`, event `$2` (body `$3`) waits after `$4` attempts for its next at `$5`, while `$7` holds endpoint `$6`. */
    retry: `INSERT INTO webhook_retries (endpoint_id, event_id, body, attempts, next_at)
      SELECT CAST($1 AS TEXT), CAST($2 AS TEXT), CAST($3 AS TEXT), CAST($4 AS ${ddl.integer}), CAST($5 AS TEXT)
      WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE ${held('$6', '$7')})
      ON CONFLICT (endpoint_id, event_id) DO UPDATE SET attempts = excluded.attempts, next_at = excluded.next_at
      RETURNING event_id`,
    /** At endpoint `$1`, event `$2` waits no more, while `$4` holds endpoint `$3`. */
    retried: `DELETE FROM webhook_retries WHERE endpoint_id = $1 AND event_id = $2
      AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE ${held('$3', '$4')}) RETURNING event_id`,
    /** Endpoint `$1`'s retries due at `$2`, soonest first, up to `$3`. */
    due: `SELECT event_id AS "eventId", body, attempts, next_at AS "nextAt" FROM webhook_retries
      WHERE endpoint_id = $1 AND next_at <= $2 ORDER BY next_at, event_id LIMIT $3`,
    /** When endpoint `$1`'s next retry is due, if one waits. */
    nextDue: `SELECT min(next_at) AS "nextAt" FROM webhook_retries WHERE endpoint_id = $1`,
    /** Logs one attempt at endpoint `$1`. */
    log: `INSERT INTO webhook_attempts (endpoint_id, event_id, attempt, at, status, error, duration_ms, outcome)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    disabledCount: `SELECT count(*) AS disabled FROM webhook_endpoints WHERE status = 'disabled'`,
    /** The first event in the feed's order that occurred at `$1` or later. */
    firstSince: `SELECT ${eventPlace.tx} AS tx, seq FROM order_events WHERE occurred_at >= $1 ORDER BY ${eventPlace.order} LIMIT 1`,
    /** The events that occurred at `$1` or later, by type. */
    countSince: 'SELECT type, count(*) AS events FROM order_events WHERE occurred_at >= $1 GROUP BY type',
    /** Moves endpoint `$3`'s cursor to (`$1`, `$2`) if it is still at (`$4`, `$5`), whoever holds it: a replay. */
    rewind: `UPDATE webhook_endpoints SET cursor_tx = $1, cursor_seq = $2 WHERE id = $3 AND cursor_tx = $4 AND cursor_seq = $5
      RETURNING id`,
    /** Endpoint `$1`'s attempts, newest first, before log position `$2`, up to `$3`. */
    attempts: `SELECT seq, event_id AS "eventId", attempt, at, status, error, duration_ms AS "durationMs", outcome
      FROM webhook_attempts WHERE endpoint_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3`,
  } as const;
}

export type WebhookSql = ReturnType<typeof webhookSql>;

/** The values of webhookSql's create for a new endpoint. */
export function createEndpointStatement(sql: WebhookSql, endpoint: NewEndpoint): Statement {
  return statement(sql.create, [
    endpoint.id,
    endpoint.url,
    eventTypesText(endpoint.eventTypes),
    endpoint.description,
    endpoint.secret,
    endpoint.createdAt,
    endpoint.cursor.tx,
    endpoint.cursor.seq,
  ]);
}

/** The values of webhookSql's update for a change to endpoint `id`. */
export function updateEndpointStatement(sql: WebhookSql, id: string, changes: EndpointChanges): Statement {
  const status = changes.status ?? null;
  return statement(sql.update, [
    changes.url ?? null,
    changes.eventTypes === undefined ? 0 : 1,
    changes.eventTypes === undefined ? null : eventTypesText(changes.eventTypes),
    changes.description === undefined ? 0 : 1,
    changes.description ?? null,
    status,
    status,
    status,
    status,
    id,
  ]);
}

function eventTypesText(types: readonly WebhookEventType[] | null): string | null {
  return types === null ? null : types.join(',');
}

const isEventType = (value: string): value is WebhookEventType => WEBHOOK_EVENT_TYPES.some((type) => type === value);

/** A row of the endpoint statements as the record it is; `now` decides whether a rotated-out secret still signs. */
export function endpointOf(row: Row, now: string): EndpointRecord {
  const { id, url, event_types, description, status, disabled_reason, created_at, secret, previous_secret, previous_until } = row;
  const { cursor_tx, cursor_seq, failing_since } = row;
  if (typeof id !== 'string' || typeof url !== 'string' || typeof secret !== 'string' || typeof created_at !== 'string') {
    throw new StoreInvariantError('a webhook endpoint row lacks its id, url, secret or creation time');
  }
  if (status !== 'enabled' && status !== 'disabled') throw new StoreInvariantError(`webhook endpoint ${id} has status ${String(status)}`);
  if (typeof cursor_tx !== 'string' || (typeof cursor_seq !== 'number' && typeof cursor_seq !== 'string')) {
    throw new StoreInvariantError(`webhook endpoint ${id} has no cursor`);
  }
  const types = typeof event_types === 'string' ? event_types.split(',') : null;
  if (types !== null && !types.every(isEventType)) throw new StoreInvariantError(`webhook endpoint ${id} has unknown event types`);
  const rotating = typeof previous_secret === 'string' && typeof previous_until === 'string' && previous_until > now;
  return {
    id,
    url,
    eventTypes: types === null ? null : types.filter(isEventType),
    description: typeof description === 'string' ? description : null,
    status,
    disabledReason: typeof disabled_reason === 'string' ? disabled_reason : null,
    createdAt: created_at,
    secrets: rotating ? [secret, previous_secret] : [secret],
    cursor: { tx: cursor_tx, seq: Number(cursor_seq) },
    failingSince: typeof failing_since === 'string' ? failing_since : null,
  };
}

/** A row of WEBHOOK_SQL.attempts as the record it is, with its log position. */
export function attemptOf(row: Row): AttemptRecord & { readonly seq: number } {
  const { seq, eventId, attempt, at, status, error, durationMs, outcome } = row;
  if (typeof eventId !== 'string' || typeof at !== 'string' || !isOutcome(outcome)) {
    throw new StoreInvariantError('a webhook attempt row lacks its event, time or outcome');
  }
  return {
    seq: Number(seq),
    eventId,
    attempt: Number(attempt),
    at,
    status: status === null ? null : Number(status),
    error: typeof error === 'string' ? error : null,
    durationMs: Number(durationMs),
    outcome,
  };
}

const isOutcome = (value: unknown): value is AttemptOutcome =>
  value === 'delivered' || value === 'retrying' || value === 'failed' || value === 'refused';

/** A row of WEBHOOK_SQL.due as the retry it is. */
export function retryOf(row: Row): RetryRecord {
  const { eventId, body, attempts, nextAt } = row;
  if (typeof eventId !== 'string' || typeof body !== 'string' || typeof nextAt !== 'string') {
    throw new StoreInvariantError('a webhook retry row lacks its event, body or time');
  }
  return { eventId, body, attempts: Number(attempts), nextAt };
}
