import { storeKindOf, sqliteFile, type Config, type StoreKind } from '../config';
import type { Logger } from '../logger';
import type { PostgresStoreOptions } from './postgres/store';
import type { Store } from './types';

/**
 * How each kind of store is opened. PostgreSQL's driver and store are loaded when one is first
 * opened, so a server on SQLite never loads them; SQLite's driver is loaded with this folder's
 * index, which exports openSqliteStore as the synchronous opener the tests, the bench and the
 * import use. A new dialect adds its opener here (and its folder beside sqlite/ and postgres/: see
 * src/store/README.md), and its location's form in config.ts.
 */
const OPENERS: Readonly<Record<StoreKind, (location: string, config: Config, logger?: Logger, options?: OpenOptions) => Promise<Store>>> = {
  postgres: (url, config, logger, options) =>
    openPostgresStore(url, {
      poolSize: config.postgres.poolSize,
      statementTimeoutMs: config.postgres.statementTimeoutMs,
      connectTimeoutMs: config.busyTimeoutMs,
      logger,
      announceAs: options?.announceAs,
    }),
  sqlite: async (location, config) =>
    (await import('./sqlite/store')).openSqliteStore(sqliteFile(location), {
      busyTimeoutMs: config.busyTimeoutMs,
      // Every list that may run at once keeps its reader connection for the next.
      readers: config.admission.limit,
    }),
};

/**
 * Opens a PostgreSQL store. The driver and the store are loaded when a PostgreSQL store is first
 * opened, so a server on SQLite starts without loading them.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  return (await import('./postgres/store')).openPostgresStore(url, options);
}

/** How a store is opened beyond its configuration. */
export interface OpenOptions {
  /** The name its commits are announced under (Store.announcesAs), where it announces them. */
  readonly announceAs?: string | undefined;
}

/** Opens the store the config names: PETSTORE_DATABASE_URL when it is set, else the SQLite file. */
export async function openStore(config: Config, logger?: Logger, options?: OpenOptions): Promise<Store> {
  const location = config.databaseUrl ?? config.dbPath;
  const kind = storeKindOf(location);
  // config.ts refuses a location no store opens, so this is a store's own mistake.
  if (kind === undefined) throw new Error(`no store opens ${storeLocation(config)}`);
  return OPENERS[kind](location, config, logger, options);
}

/** Where the store lives, for logs and banners, without any password in the URL. */
export function storeLocation(config: Config): string {
  if (config.databaseUrl === undefined) return config.dbPath;
  const url = new URL(config.databaseUrl);
  url.password = '';
  return url.toString();
}
