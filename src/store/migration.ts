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

/** How many offending ids a refusal names. */
export const REFUSAL_IDS = 10;

/** The database was migrated by a newer release than this one: this release must not touch it. */
export class SchemaTooNewError extends Error {
  override name = 'SchemaTooNewError';
}

/** A migration refused to apply because existing rows break its rule; nothing was changed. */
export class MigrationRefusedError extends Error {
  override name = 'MigrationRefusedError';
  constructor(
    readonly migration: Migration,
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

/**
 * One step the migration runner asks its dialect to take, in the dialect's one transaction:
 * - `run`: execute the SQL;
 * - `value`: the first column of the first row, as a number (null when it is SQL NULL);
 * - `ids`: the first column of every row, as numbers;
 * - `applied`: record that this migration was applied (the dialect's INSERT into schema_migrations).
 */
export type MigrationStep =
  | { readonly run: string }
  | { readonly value: string }
  | { readonly ids: string }
  | { readonly applied: { readonly version: number; readonly name: string; readonly at: string } };

/** What a dialect answers a step: a number or null for `value`, numbers for `ids`, nothing else. */
export type MigrationAnswer = number | null | number[] | undefined;

/**
 * The migration algorithm, for every dialect: create the history table (`createTableSql`, the
 * dialect's), read the version, refuse a database from a newer release, and for each newer
 * migration refuse it while rows break its rule (naming them), else apply and record it.
 *
 * It is a generator of steps, so that one algorithm serves a synchronous driver (better-sqlite3,
 * inside its immediate transaction) and an asynchronous one (pg, under its advisory lock): the
 * dialect takes each step and hands back its answer (see driveSync and driveAsync).
 */
export function* migrationSteps(migrations: readonly Migration[], createTableSql: string): Generator<MigrationStep, void, MigrationAnswer> {
  yield { run: createTableSql };
  const current = ((yield { value: 'SELECT max(version) FROM schema_migrations' }) as number | null) ?? 0;
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new SchemaTooNewError(`database schema version ${current} is newer than this release knows (${latest})`);
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    if (migration.refuseWhile) {
      const { violationsSql } = migration.refuseWhile;
      const count = Number((yield { value: `SELECT count(*) FROM (${violationsSql}) AS violations` }) ?? 0);
      if (count > 0) {
        const ids = (yield { ids: `${violationsSql} LIMIT ${REFUSAL_IDS}` }) as number[];
        throw new MigrationRefusedError(migration, ids, count);
      }
    }
    yield { run: migration.sql };
    yield { applied: { version: migration.version, name: migration.name, at: new Date().toISOString() } };
  }
}

/**
 * Runs steps with a synchronous dialect: each step the algorithm yields is taken by the dialect,
 * and its answer handed back (the migration runner's steps, the import's publish).
 */
export function driveSync<S, A, T>(steps: Generator<S, T, A>, take: (step: S) => A): T {
  let next = steps.next();
  while (!next.done) next = steps.next(take(next.value));
  return next.value;
}

/** Runs steps with an asynchronous dialect. */
export async function driveAsync<S, A, T>(steps: Generator<S, T, A>, take: (step: S) => Promise<A>): Promise<T> {
  let next = steps.next();
  while (!next.done) next = steps.next(await take(next.value));
  return next.value;
}
