// Every error a store raises, whatever its database: the one home of the store's errors.

/** A store that cannot be reached right now (locked, unreadable, full, or down). */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

/** Another connection holds the lock this operation needs: unavailable now, and worth waiting for. */
export class StoreBusyError extends StoreUnavailableError {
  override name = 'StoreBusyError';
}

/** The store found itself in a state its code rules out: a bug, never the client's fault or the database's absence. */
export class StoreInvariantError extends Error {
  override name = 'StoreInvariantError';
}

/** A key name that is already used. */
export class DuplicateKeyNameError extends Error {
  override name = 'DuplicateKeyNameError';
}

/** Why the store refused an import record, whatever the store. */
export type ImportConflict = { kind: 'repeated_id'; id: number; first: number } | { kind: 'id_taken'; id: number } | { kind: 'no_free_id' };

/**
 * An import record that the store refused; `index` is its position in the file. Every store
 * raises the same kinds with the same words: the message is made here, once.
 */
export class ImportConflictError extends Error {
  override name = 'ImportConflictError';
  /** The record's field the refusal is about. */
  readonly field = 'id';
  constructor(
    readonly index: number,
    readonly conflict: ImportConflict,
  ) {
    super(conflictMessage(conflict));
  }
}

function conflictMessage(conflict: ImportConflict): string {
  switch (conflict.kind) {
    case 'repeated_id':
      return `id ${conflict.id} repeats the id of record ${conflict.first}`;
    case 'id_taken':
      return `id ${conflict.id} is already taken by an existing order`;
    case 'no_free_id':
      return 'id cannot be assigned: no larger id is free; give this record an id';
  }
}

/** A feed position older than the events the store still keeps: the events right after it were removed. */
export class EventsExpiredError extends Error {
  override name = 'EventsExpiredError';
}

/** The database was migrated by a newer release than this one: this release must not touch it. */
export class SchemaTooNewError extends Error {
  override name = 'SchemaTooNewError';
}

/** The database cannot hold what the store keeps (its encoding, say): nothing was written to it. */
export class UnsupportedDatabaseError extends Error {
  override name = 'UnsupportedDatabaseError';
}

/** A migration refused to apply because existing rows break its rule; nothing was changed. */
export class MigrationRefusedError extends Error {
  override name = 'MigrationRefusedError';
  constructor(
    readonly migration: { readonly version: number; readonly name: string; readonly refuseWhile?: { readonly rule: string } | undefined },
    /** The first offending ids, in id order. */
    readonly ids: readonly number[],
    /** How many rows break the rule in all. */
    readonly count: number,
  ) {
    const rule = migration.refuseWhile?.rule ?? '';
    const more = count > ids.length ? ` and ${count - ids.length} more` : '';
    super(
      `schema migration ${migration.version} (${migration.name}) cannot be applied: ${count} order${count === 1 ? '' : 's'} ` +
        `break${count === 1 ? 's' : ''} its rule that ${rule}: id${ids.length === 1 ? '' : 's'} ${ids.join(', ')}${more}. ` +
        'Nothing was changed. Fix or remove those rows (see the README, "Rows a migration refuses"), then start again.',
    );
  }
}
