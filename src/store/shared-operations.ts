import type { MaybePromise } from '../maybe-promise';
import { cursorSecretOf, etagOf, timestamp } from './core';
import { drive, statement, type Dialect, type Queryable, type SyncQueryable } from './dialect';
import { findKeySteps, KEY_SQL, keyCreationError, keyInfoOf, keyUpdateValues, newKeyValues } from './keys';
import type { StoreSql } from './sql';
import type { Store } from './types';

/** The operations every store answers with the same statements, whatever its mechanics. */
export type SharedOperations = Pick<
  Store,
  | 'createKey'
  | 'updateKey'
  | 'rotateKey'
  | 'undoRotation'
  | 'listKeys'
  | 'revokeKey'
  | 'findKey'
  | 'listEtag'
  | 'hasOrders'
  | 'petExists'
  | 'cursorSecret'
>;

/**
 * The shared operations over a store's two ways to its database: `read`, which answers at once on
 * a store that answers in-process (SQLite), so that a request's key check takes no turn of the event
 * loop; and `write`, through which a store keeps its writes' own checks (SQLite's: the opened file
 * still there, and readiness told of a failed write). Each turns its driver's errors into the store's.
 */
export function sharedOperations(
  sql: StoreSql,
  dialect: Dialect,
  ways: { readonly read: SyncQueryable | Queryable; readonly write: Queryable },
): SharedOperations {
  const { read, write } = ways;
  const rows = (on: Queryable, text: string, values: readonly unknown[] = []) => on.rows(statement(text, values));
  /** Whether a write changed one row: each such statement returns the row it changed. */
  const changedOne = async (text: string, values: readonly unknown[]) =>
    (await rows(write, `${text} RETURNING 1 AS one`, values)).length === 1;
  return {
    findKey: (keyHash, at) => drive(findKeySteps(keyHash, at), read),
    async createKey(name, keyHash, key) {
      try {
        await write.run(statement(KEY_SQL.create, newKeyValues(name, keyHash, timestamp(), key)));
      } catch (err) {
        throw keyCreationError(err, name, dialect);
      }
    },
    listKeys: async () => (await rows(read, KEY_SQL.list)).map(keyInfoOf),
    revokeKey: (name) => changedOne(KEY_SQL.revoke, [timestamp(), name]),
    updateKey: (name, changes) => changedOne(KEY_SQL.update, keyUpdateValues(name, changes)),
    rotateKey: (name, keyHash, graceUntil) => changedOne(KEY_SQL.rotate, [graceUntil, keyHash, name]),
    undoRotation: (name, keyHash) => changedOne(KEY_SQL.unrotate, [name, keyHash]),
    listEtag: async () => etagOf(firstOf(await rows(read, sql.meta)) as { store_id: string; revision: number } | undefined),
    hasOrders: async () => (await rows(read, sql.anyOrder)).length > 0,
    petExists: async (petId) => (await rows(read, sql.petExists, [petId])).length > 0,
    cursorSecret: () =>
      cursorSecretOf(async (text, value) =>
        value === undefined
          ? (firstOf(await rows(read, text))?.cursor_secret as string | null | undefined)
          : void (await write.run(statement(text, [value]))),
      ),
  };
}

/** The first row, if any. */
const firstOf = <R>(rows: readonly R[]): R | undefined => rows[0];

/** A queryable whose every statement runs through `through` (a store's guard), at once when it answers at once. */
export function queryableThrough(on: SyncQueryable, through: <T>(operation: () => T) => T): SyncQueryable;
export function queryableThrough(on: Queryable, through: <T>(operation: () => MaybePromise<T>) => MaybePromise<T>): Queryable;
export function queryableThrough(on: Queryable, through: <T>(operation: () => MaybePromise<T>) => MaybePromise<T>): Queryable {
  return {
    run: (s) => through(() => on.run(s)),
    rows: (s) => through(() => on.rows(s)),
    ...(on.fused === undefined ? {} : { fused: (writes, then) => through(() => on.fused!(writes, then)) }),
  };
}
