import { statement, type Statement, type Steps } from './dialect';
import { BUMP_REVISION_SQL } from './sql';
import { andThen, type MaybePromise } from '../maybe-promise';
import { ImportConflictError } from './errors';

/**
 * The SQL of each statement of the publish, for the dialect's staging table: the dialect's part.
 * "Staged" records are the import's, in file order by `idx`.
 */
export interface PublishSql extends NumberingSql {
  /** `idx, id` of the first staged record whose id an order already has. */
  readonly firstTaken: Statement;
}

/** The statements that give the staged records their ids and move them (numberingSteps). */
export interface NumberingSql {
  /** `id`: the largest id among the orders and the staged records (NULL when there is none). */
  readonly largestId: Statement;
  /** `idx` of the staged record without an id at the given offset among them. */
  unassignable(offset: number): Statement;
  /** Moves every staged record with an id into `orders` (or where the dialect publishes from): one statement or more, run in order. */
  readonly moveWithIds: readonly Statement[];
  /** Moves every staged record without an id there too, numbered `largest + 1`, `+ 2`, … in file order. */
  moveWithoutIds(largest: number): readonly Statement[];
}

/**
 * Checks the staged records against the orders and gives each its id, the same way on every
 * store, moving them where the dialect's moves put them: records with an id go in as they are,
 * unless an order already has that id; records without one get the ids after the largest of the
 * store and the file, in file order, and past the largest safe integer the first record left
 * without one is the error. Each error names the record (ImportConflictError). Runs as steps
 * (drive, in ./dialect.ts); the dialect's transaction undoes every step when one throws.
 */
export function* settleSteps(sql: PublishSql, count: number): Steps<number> {
  const [taken] = (yield { rows: sql.firstTaken }) ?? [];
  if (taken !== undefined) throw new ImportConflictError(Number(taken.idx), { kind: 'id_taken', id: Number(taken.id) });
  return yield* numberingSteps(sql, count);
}

/**
 * settleSteps once no staged id is taken: records without an id get the ids after the largest, and
 * past the largest safe integer the first left without one is the error; then every record moves.
 */
export function* numberingSteps(sql: NumberingSql, count: number): Steps<number> {
  const [largestRow] = (yield { rows: sql.largestId }) ?? [];
  const largest = largestRow?.id == null ? 0 : Number(largestRow.id);
  const free = Math.max(0, Number.MAX_SAFE_INTEGER - Math.max(largest, 0));
  const [unassignable] = (yield { rows: sql.unassignable(free) }) ?? [];
  if (unassignable !== undefined) throw new ImportConflictError(Number(unassignable.idx), { kind: 'no_free_id' });
  for (const move of sql.moveWithIds) yield { run: move };
  for (const move of sql.moveWithoutIds(largest)) yield { run: move };
  return count;
}

/** The end of every publish, in its transaction: an import that adds orders changes the list's revision (an empty one changes nothing). */
export function* revisionSteps(count: number): Steps<number> {
  if (count > 0) yield { run: statement(BUMP_REVISION_SQL) };
  return count;
}

/** Publishes staged records whose ids the store has checked against the orders itself: numberingSteps, then revisionSteps. */
export function* numberedPublishSteps(sql: NumberingSql, count: number): Steps<number> {
  yield* numberingSteps(sql, count);
  return yield* revisionSteps(count);
}

/** What an import found wrong, as far as it looked: each kind of fault at its first record. */
export interface ImportFaults {
  /** The first record that repeats the id of a record before it. */
  readonly repeat: ImportConflictError | undefined;
  /** What reading the file threw, at the first record it could not give (a file or JSON error, a record the contract refuses). */
  readonly unreadable: { readonly error: unknown } | undefined;
  /** The first record whose id an order had before the import: looked for only when neither fault above was found. */
  readonly taken: () => MaybePromise<ImportConflictError | undefined>;
}

/**
 * Throws the one error an import that went wrong reports, the same in every store: the first
 * repeated id, else the record the file could not give, else the first taken id; returns when none
 * of them is there. A repeat comes first because it is a fault of the file alone, whatever the
 * store holds.
 */
export function throwReportedFault({ repeat, unreadable, taken }: ImportFaults): MaybePromise<void> {
  if (repeat !== undefined) throw repeat;
  if (unreadable !== undefined) throw unreadable.error;
  return andThen(taken(), (found) => {
    if (found !== undefined) throw found;
  });
}
