import { ConfigError, type Config } from '../config';
import { openSqliteStore } from './sqlite/store';
import type { Store } from './types';

/** Opens the store the config selects. */
export function openStore(config: Config): Store {
  if (config.databaseUrl !== undefined) {
    throw new ConfigError(
      'PETSTORE_DATABASE_URL is set, but this release has only the SQLite store; unset it and use PETSTORE_DB or --db',
    );
  }
  return openSqliteStore(config.dbPath, { busyTimeoutMs: config.busyTimeoutMs });
}
