export type { OrderSnapshot } from './types';
export type { Store, ImportRecord, KeyInfo, CancelOutcome, ShipOutcome, OrderStatus } from './types';
export { DuplicateKeyNameError, ImportConflictError } from './types';
export { openSqliteStore } from './sqlite/store';
export { rowToOrder } from './shared';
export type { SqliteStoreOptions } from './sqlite/store';
export { openStore, storeLocation } from './open';
export { openPostgresStore } from './postgres/store';
export type { PostgresStoreOptions } from './postgres/store';
