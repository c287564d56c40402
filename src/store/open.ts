import type { Config } from '../config';
import type { Logger } from '../logger';
import { storeKindOf } from './locations';
import type { PostgresStoreOptions } from './postgres/store';
import type { Store } from './types';

/**
 * Opens a PostgreSQL store. The driver and the store are loaded when a PostgreSQL store is first
 * opened, so a server on SQLite starts without loading them.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  return (await import('./postgres/store')).openPostgresStore(url, options);
}

/** Opens the store the config names: PETSTORE_DATABASE_URL when it is set, else the SQLite file. */
export async function openStore(config: Config, logger?: Logger): Promise<Store> {
  const location = config.databaseUrl ?? config.dbPath;
  const kind = storeKindOf(location);
  // config.ts refuses a location no store opens, so this is a store's own mistake.
  if (kind === undefined) throw new Error(`no store opens ${storeLocation(config)}`);
  return kind.open(location, config, logger);
}

/** Where the store lives, for logs and banners, without any password in the URL. */
export function storeLocation(config: Config): string {
  if (config.databaseUrl === undefined) return config.dbPath;
  const url = new URL(config.databaseUrl);
  url.password = '';
  return url.toString();
}
