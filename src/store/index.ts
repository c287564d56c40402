export type { OrderSnapshot } from './types';
export type {
  Store,
  OrderReads,
  OrderMoves,
  Placements,
  OrderImport,
  EventLog,
  KeyStore,
  RateCounter,
  StoreHealth,
  ImportRecord,
  ImportRecords,
  KeyChanges,
  KeyInfo,
  KeyMatch,
  KeyPolicies,
  NewKey,
  RateCount,
  RateWindow,
  RateWindows,
  CancelOutcome,
  ShipOutcome,
  NewOrder,
  Placement,
  PlaceOutcome,
  OrderRecord,
  ListedOrder,
  OrderStatus,
  OrderFilter,
  PageRequest,
  EventPosition,
  EventPage,
  EventCounts,
  OrderEventRecord,
  OrderEventType,
} from './types';
export {
  DuplicateKeyNameError,
  EventsExpiredError,
  ImportConflictError,
  MigrationRefusedError,
  SchemaTooNewError,
  StoreBusyError,
  StoreInvariantError,
  StoreUnavailableError,
} from './errors';
export { openSqliteStore } from './sqlite/store';
export { rowToRecord } from './core';
export type { SqliteStoreOptions } from './sqlite/store';
export { openPostgresStore, openStore, storeLocation } from './open';
export type { PostgresStoreOptions } from './postgres/store';
