import { storeSql } from '../sql';

/**
 * The orders every read and write of the SQLite store sees: not those of an import still being
 * published a slice at a time (./import.ts), the orders between its first and last id. Each bound
 * is read once per statement, in the statement's own snapshot; when nothing is being published the
 * range is empty (from 1 to 0). The SQLite store's `visible` condition in every shared statement.
 */
export const PUBLISHED = [
  'id NOT BETWEEN (SELECT coalesce(min(from_id), 1) FROM import_publishing) AND (SELECT coalesce(min(to_id), 0) FROM import_publishing)',
];

/** The shared statements (../sql.ts) on the orders the SQLite store shows: its writer's and its readers'. */
export const SQL = storeSql(PUBLISHED);
