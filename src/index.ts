export { createApp, type AppDeps } from './app';
export { startServer, closeOnSignals, type RunningServer, type ServerOptions } from './server';
export { loadConfig, ConfigError, type Config } from './config';
export { ApiError, ERRORS } from './errors';
export { loadDocument, SPEC_PATH } from './contract/document';
export type { Order, ErrorBody, ErrorCode, OperationId, paths, components, operations } from './contract/types';
export { openSqliteStore, openStore, StoreUnavailableError, type Store } from './store';
export { createLogger, type Logger } from './logger';
export {
  createOrdersClient,
  OrdersApiError,
  type OrdersClient,
  type OrdersClientOptions,
  type ListResult,
  type OrderResult,
  type Deprecation,
} from './client';
