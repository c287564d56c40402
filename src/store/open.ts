import type { Config } from '../config';
import type { Logger } from '../logger';
import type { PostgresStoreOptions } from './postgres/store';
import { openSqliteStore } from './sqlite/store';
import type { Store } from './types';

/**
 * Opens a PostgreSQL store. The driver and the store are loaded when a PostgreSQL store is first
 * opened, so a server on SQLite starts without loading them.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  return (await import('./postgres/store')).openPostgresStore(url, options);
}

/** Opens the store the config selects: PostgreSQL when PETSTORE_DATABASE_URL is set, else the SQLite file. */
export async function openStore(config: Config, logger?: Logger): Promise<Store> {
  if (config.databaseUrl !== undefined) {
    return openPostgresStore(config.databaseUrl, {
      poolSize: config.postgres.poolSize,
      statementTimeoutMs: config.postgres.statementTimeoutMs,
      connectTimeoutMs: config.busyTimeoutMs,
      logger,
    });
  }
  return openSqliteStore(config.dbPath, { busyTimeoutMs: config.busyTimeoutMs });
}

/** Where the store lives, for logs and banners, without any password in the URL. */
export function storeLocation(config: Config): string {
  if (config.databaseUrl === undefined) return config.dbPath;
  const url = new URL(config.databaseUrl);
  url.password = '';
  return url.toString();
}
