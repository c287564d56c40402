import { keptByText } from '../kept';
import { formatPolicies, parsePolicies, NO_LIMIT, type Policy } from '../rate-policy';
import { statement, type Dialect, type Row, type Steps } from './dialect';
import { textOrNull } from './core';
import { DuplicateKeyNameError, StoreInvariantError } from './errors';
import type { KeyChanges, KeyInfo, KeyMatch, KeyPolicies, NewKey } from './types';

// API keys as every store keeps them: the statements, the one lookup of a request's key, and the
// stored forms of scopes and policies, which go no further than this file.

/** A key as its check reads it: by one secret (KEY_SQL.find), or by many at once (a store that batches its checks). */
export const KEY_FOUND_COLUMNS = `name, key_hash AS "keyHash", previous_hash AS "previousHash", revoked_at AS "revokedAt",
    expires_at AS "expiresAt", previous_until AS "previousUntil", scopes, rate_limit AS "rateLimit"`;

/** The API-key statements. */
export const KEY_SQL = {
  create: 'INSERT INTO api_keys (name, key_hash, created_at, expires_at, scopes, rate_limit) VALUES ($1, $2, $3, $4, $5, $6)',
  list: `SELECT name, scopes, rate_limit AS "rateLimit", created_at AS "createdAt", expires_at AS "expiresAt", revoked_at AS "revokedAt",
    previous_until AS "previousUntil"
    FROM api_keys ORDER BY id`,
  revoke: 'UPDATE api_keys SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL',
  /**
   * Changes the active key named `$6`: its expiry to `$2` when `$1` is 1 (null: none), its scopes to
   * `$3` unless null, its rate limit to `$5` when `$4` is 1 (null: the deployment's).
   */
  update: `UPDATE api_keys SET expires_at = CASE WHEN $1 = 1 THEN $2 ELSE expires_at END, scopes = COALESCE($3, scopes),
      rate_limit = CASE WHEN $4 = 1 THEN $5 ELSE rate_limit END
    WHERE name = $6 AND revoked_at IS NULL`,
  /**
   * A new secret for the active key named `$3`, hash `$2`; the one it replaces keeps working until
   * `$1`, and one replaced before is forgotten.
   */
  rotate: 'UPDATE api_keys SET previous_hash = key_hash, previous_until = $1, key_hash = $2 WHERE name = $3 AND revoked_at IS NULL',
  /** Undoes a rotation to hash `$2` of the key named `$1` whose new secret nobody saw: the replaced one is the key's again. */
  unrotate: `UPDATE api_keys SET key_hash = previous_hash, previous_hash = NULL, previous_until = NULL
    WHERE name = $1 AND key_hash = $2 AND previous_hash IS NOT NULL`,
  /**
   * The key whose secret, or whose replaced secret, has hash `$1` (`$2` the same): each secret is
   * unique, with its index, so this is one statement and two index reads, whether the key exists or
   * not. Every keyed request reads it, and every refused one; keyMatchIn judges what it finds.
   */
  find: `SELECT ${KEY_FOUND_COLUMNS} FROM api_keys WHERE key_hash = $1 OR previous_hash = $2`,
} as const;

/** The key with secret hash `keyHash` and its state at `at`, or null (keyMatchIn): one statement. */
export function* findKeySteps(keyHash: string, at: string): Steps<KeyMatch | null> {
  return keyMatchIn((yield { rows: statement(KEY_SQL.find, [keyHash, keyHash]) }) ?? [], keyHash, at);
}

/**
 * Of keys read with KEY_FOUND_COLUMNS, the one whose secret has hash `keyHash`, and its state at
 * `at`, or null: by its current secret, else by the one its last rotation replaced, which works in
 * its grace and is refused as a revoked key once the grace has ended. Times are ISO 8601 UTC text
 * of one form, so they compare as text. `rows` may hold other keys too (a batch of checks).
 */
export function keyMatchIn(rows: readonly Row[], keyHash: string, at: string): KeyMatch | null {
  // The current secret wins: a key's secret could only be another's replaced one by a collision.
  const current = rows.find((row) => row.keyHash === keyHash);
  const row = current ?? rows.find((row) => row.previousHash === keyHash);
  if (row === undefined) return null;
  const { name, revokedAt, expiresAt, previousUntil, scopes, rateLimit } = row;
  if (typeof name !== 'string' || typeof scopes !== 'string') throw new StoreInvariantError('a key row has no name or scopes');
  const state =
    revokedAt !== null
      ? 'revoked'
      : typeof expiresAt === 'string' && expiresAt <= at
        ? 'expired'
        : current === undefined && !(typeof previousUntil === 'string' && previousUntil > at)
          ? 'revoked'
          : 'active';
  const policies = policiesOf(rateLimit);
  return { name, state, scopes: scopeSetOf(scopes), policies: policies === NO_LIMIT ? [] : policies };
}

/** The values of KEY_SQL.create for a new key, its creation time `at`. */
export function newKeyValues(name: string, keyHash: string, at: string, key: NewKey): unknown[] {
  return [name, keyHash, at, key.expiresAt ?? null, storedScopes(key.scopes), storedPolicies(key.policies ?? null)];
}

/** The values of KEY_SQL.update for the changes `changes` gives. */
export function keyUpdateValues(name: string, changes: KeyChanges): unknown[] {
  const expires = changes.expiresAt !== undefined;
  const limits = changes.policies !== undefined;
  return [
    expires ? 1 : 0,
    expires ? changes.expiresAt : null,
    changes.scopes === undefined ? null : storedScopes(changes.scopes),
    limits ? 1 : 0,
    limits ? storedPolicies(changes.policies ?? null) : null,
    name,
  ];
}

/** A row of KEY_SQL.list as operators see it. */
export function keyInfoOf(row: Row): KeyInfo {
  const { name, scopes, rateLimit, createdAt } = row;
  if (typeof name !== 'string' || typeof scopes !== 'string' || typeof createdAt !== 'string') {
    throw new StoreInvariantError('a key row has no name, scopes or creation time');
  }
  return {
    name,
    scopes: [...scopeSetOf(scopes)],
    policies: policiesOf(rateLimit),
    createdAt,
    expiresAt: textOrNull(row.expiresAt, 'api_keys'),
    revokedAt: textOrNull(row.revokedAt, 'api_keys'),
    previousUntil: textOrNull(row.previousUntil, 'api_keys'),
  };
}

/** What creating a key raised, as the store reports it: a taken name is DuplicateKeyNameError, anything else as it is. */
export function keyCreationError(err: unknown, name: string, dialect: Dialect): unknown {
  return dialect.uniqueViolation(err) === 'api_keys.name' ? new DuplicateKeyNameError(`a key named "${name}" already exists`) : err;
}

/** A key's scopes as stored: separated by spaces, as OAuth 2 writes a scope list (RFC 6749 §3.3). */
const storedScopes = (scopes: readonly string[]): string => scopes.join(' ');

/** A key's policies as stored: `600/min,100000/day`, `none`, or NULL for the deployment's. */
const storedPolicies = (policies: KeyPolicies): string | null => (policies === null ? null : formatPolicies(policies));

/** Most distinct stored texts kept parsed (a store has few distinct ones). */
const PARSED_MAX = 256;

/** Stored scopes as a set, parsed once per distinct list: every keyed request reads one. */
const scopeSetOf = parsedOnce((stored) => new Set(stored.split(' ').filter((scope) => scope !== '')) as ReadonlySet<string>);

/** Stored policies as what they give, parsed once per distinct text. */
const parsedPolicies = parsedOnce((stored): readonly Policy[] | typeof NO_LIMIT => parsePolicies('rate limit', stored.split(',')));

/** A stored rate_limit as the key's policies: null (the deployment's) as it is. */
function policiesOf(stored: unknown): KeyPolicies {
  if (stored === null || stored === undefined) return null;
  if (typeof stored !== 'string') throw new StoreInvariantError('a key row has a rate limit that is not text');
  return parsedPolicies(stored);
}

/** `parse`, with its answers kept for the PARSED_MAX distinct texts parsed last. */
function parsedOnce<T>(parse: (stored: string) => T): (stored: string) => T {
  const kept = keptByText<T>(PARSED_MAX);
  return (stored) => kept(stored, parse);
}
