/** One schema change; versions are applied in order, exactly once, and never edited once shipped. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}
