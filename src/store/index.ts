export type { Store, ImportRecord, KeyInfo, CancelOutcome, ShipOutcome, OrderStatus } from './types';
export { DuplicateKeyNameError, ImportConflictError } from './types';
export { openSqliteStore, rowToOrder } from './sqlite/store';
export type { SqliteStoreOptions } from './sqlite/store';
export { openStore } from './open';
