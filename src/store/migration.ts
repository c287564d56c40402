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
