import type { Config } from '../config';
import type { Logger } from '../logger';
import type { Store } from './types';

/** One kind of store a location can name. */
export interface StoreKind {
  /** As logs and errors name it. */
  readonly name: string;
  /** Whether the location is one of this kind's forms. */
  matches(location: string): boolean;
  /** Opens the store, loading its driver then: a server loads only the driver of its own store. */
  open(location: string, config: Config, logger?: Logger): Promise<Store>;
}

/**
 * The stores, by the form of their location; the first that matches opens it. A new dialect adds
 * its entry here (and its folder beside sqlite/ and postgres/: see src/store/README.md).
 */
const STORE_KINDS: readonly StoreKind[] = [
  {
    name: 'PostgreSQL',
    matches: (location) => /^postgres(ql)?:\/\//i.test(location),
    open: async (url, config, logger) =>
      (await import('./postgres/store')).openPostgresStore(url, {
        poolSize: config.postgres.poolSize,
        statementTimeoutMs: config.postgres.statementTimeoutMs,
        connectTimeoutMs: config.busyTimeoutMs,
        logger,
      }),
  },
  {
    name: 'SQLite',
    // A file path, or `sqlite:` and a file path.
    matches: (location) => /^sqlite:/i.test(location) || !URL_LIKE.test(location),
    open: async (location, config) =>
      (await import('./sqlite/store')).openSqliteStore(sqliteFile(location), { busyTimeoutMs: config.busyTimeoutMs }),
  },
];

/**
 * A location that starts with a URL's scheme (`postgres:`, `file:`, `https:`): taken as a path, it
 * would create a directory named after the scheme. A one-letter scheme is a Windows drive (`C:`).
 */
export const URL_LIKE = /^[A-Za-z][A-Za-z0-9+.-]+:/;

/** The file a SQLite location names: the location itself, or what follows `sqlite:`. */
export function sqliteFile(location: string): string {
  return location.replace(/^sqlite:/i, '');
}

/** The kind of store a location names, or undefined for a scheme no store has. */
export function storeKindOf(location: string): StoreKind | undefined {
  return STORE_KINDS.find((kind) => kind.matches(location));
}
