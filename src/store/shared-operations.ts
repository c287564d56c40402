import type { MaybePromise } from '../maybe-promise';
import { cursorSecretOf, etagOf, textOrNull, timestamp } from './core';
import { drive, statement, type Dialect, type Queryable, type Row, type SyncQueryable } from './dialect';
import { StoreInvariantError } from './errors';
import { findKeySteps, KEY_SQL, keyCreationError, keyInfoOf, keyUpdateValues, newKeyValues } from './keys';
import type { StoreSql } from './sql';
import type { StoreFeed } from './events';
import type { EventCounts, EventLog, EventPage, EventPosition, KeyChanges, KeyInfo, KeyMatch, NewKey, Store } from './types';

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
    listEtag: async () => etagOf(metaOf(firstOf(await rows(read, sql.meta)))),
    hasOrders: async () => (await rows(read, sql.anyOrder)).length > 0,
    petExists: async (petId) => (await rows(read, sql.petExists, [petId])).length > 0,
    cursorSecret: () =>
      cursorSecretOf(async (text, value) =>
        value === undefined
          ? textOrNull(firstOf(await rows(read, text))?.cursor_secret, 'store_meta')
          : void (await write.run(statement(text, [value]))),
      ),
  };
}

/** The first row, if any. */
const firstOf = <R>(rows: readonly R[]): R | undefined => rows[0];

/** store_meta's row as etagOf takes it; undefined when there is none (etagOf says so). */
function metaOf(row: Row | undefined): { store_id: string; revision: number } | undefined {
  if (row === undefined) return undefined;
  const { store_id, revision } = row;
  if (typeof store_id !== 'string' || typeof revision !== 'number') throw new StoreInvariantError('store_meta has no store id or revision');
  return { store_id, revision };
}

/**
 * What every store answers the same way: the shared operations, and its change feed's. A store
 * extends it with its own feed and the shared operations over its queryables, and overrides what
 * it answers its own way.
 */
export abstract class SharedStore implements SharedOperations, EventLog {
  protected abstract readonly shared: SharedOperations;
  protected abstract readonly feed: StoreFeed;

  createKey(name: string, keyHash: string, key: NewKey): Promise<void> {
    return this.shared.createKey(name, keyHash, key);
  }
  updateKey(name: string, changes: KeyChanges): Promise<boolean> {
    return this.shared.updateKey(name, changes);
  }
  rotateKey(name: string, keyHash: string, graceUntil: string): Promise<boolean> {
    return this.shared.rotateKey(name, keyHash, graceUntil);
  }
  undoRotation(name: string, keyHash: string): Promise<boolean> {
    return this.shared.undoRotation(name, keyHash);
  }
  listKeys(): Promise<KeyInfo[]> {
    return this.shared.listKeys();
  }
  revokeKey(name: string): Promise<boolean> {
    return this.shared.revokeKey(name);
  }
  findKey(keyHash: string, at: string): MaybePromise<KeyMatch | null> {
    return this.shared.findKey(keyHash, at);
  }
  listEtag(): Promise<string> {
    return this.shared.listEtag();
  }
  hasOrders(): Promise<boolean> {
    return this.shared.hasOrders();
  }
  petExists(petId: number): Promise<boolean> {
    return this.shared.petExists(petId);
  }
  cursorSecret(): Promise<Buffer> {
    return this.shared.cursorSecret();
  }
  readEvents(after: EventPosition | 'oldest', limit: number): MaybePromise<EventPage> {
    return this.feed.readEvents(after, limit);
  }
  latestEventPosition(): MaybePromise<EventPosition> {
    return this.feed.latestEventPosition();
  }
  watchEvents(listener: () => void): () => void {
    return this.feed.watchEvents(listener);
  }
  onEventsWritten(listener: (counts: EventCounts) => void): () => void {
    return this.feed.onEventsWritten(listener);
  }
  pruneEvents(before: string): Promise<number> {
    return this.feed.pruneEvents(before);
  }
}
