import { ConfigError, DEFAULT_LIMITS, loadConfig } from '../src/config';
import { storeLocation } from '../src/store';

describe('loadConfig', () => {
  test('defaults when nothing is set', () => {
    const config = loadConfig({});

    expect(config.limits).toEqual(DEFAULT_LIMITS);
    expect(config.busyTimeoutMs).toBe(2000);
    expect(config.postgres).toEqual({ poolSize: 10, statementTimeoutMs: 5000 });
    expect(config.databaseUrl).toBeUndefined();
    expect(config.shutdownTimeoutMs).toBe(10_000);
    expect(config.port).toBe(8080);
    expect(Object.isFrozen(config) && Object.isFrozen(config.limits)).toBe(true);
  });

  test('reads every limit from its variable', () => {
    const config = loadConfig({
      PETSTORE_HEADERS_TIMEOUT_MS: '1000',
      PETSTORE_REQUEST_TIMEOUT_MS: '2000',
      PETSTORE_KEEP_ALIVE_TIMEOUT_MS: '3000',
      PETSTORE_SOCKET_IDLE_TIMEOUT_MS: '4000',
      PETSTORE_MAX_HEADER_BYTES: '4096',
      PETSTORE_MAX_BODY_BYTES: '0',
      PETSTORE_BUSY_TIMEOUT_MS: '50',
      PETSTORE_SHUTDOWN_TIMEOUT_MS: '0',
      PETSTORE_PG_POOL_SIZE: '25',
      PETSTORE_PG_STATEMENT_TIMEOUT_MS: '750',
      PETSTORE_DATABASE_URL: 'postgres://app@db.internal:5432/orders',
    });

    expect(config.limits).toEqual({
      headersTimeoutMs: 1000,
      requestTimeoutMs: 2000,
      keepAliveTimeoutMs: 3000,
      socketIdleTimeoutMs: 4000,
      maxHeaderBytes: 4096,
      maxBodyBytes: 0,
    });
    expect(config.busyTimeoutMs).toBe(50);
    expect(config.shutdownTimeoutMs).toBe(0);
    expect(config.postgres).toEqual({ poolSize: 25, statementTimeoutMs: 750 });
    expect(config.databaseUrl).toBe('postgres://app@db.internal:5432/orders');
  });

  test.each([
    ['PETSTORE_HEADERS_TIMEOUT_MS', '0', 'PETSTORE_HEADERS_TIMEOUT_MS must be a whole number of at least 1, got "0"'],
    ['PETSTORE_REQUEST_TIMEOUT_MS', '1.5', 'PETSTORE_REQUEST_TIMEOUT_MS must be a whole number of at least 1, got "1.5"'],
    ['PETSTORE_MAX_HEADER_BYTES', '100', 'PETSTORE_MAX_HEADER_BYTES must be a whole number of at least 1024, got "100"'],
    ['PETSTORE_MAX_BODY_BYTES', '-1', 'PETSTORE_MAX_BODY_BYTES must be a whole number, got "-1"'],
    ['PETSTORE_BUSY_TIMEOUT_MS', 'soon', 'PETSTORE_BUSY_TIMEOUT_MS must be a whole number, got "soon"'],
    ['PETSTORE_PG_POOL_SIZE', '0', 'PETSTORE_PG_POOL_SIZE must be a whole number of at least 1, got "0"'],
    ['PETSTORE_DATABASE_URL', 'mysql://x', 'PETSTORE_DATABASE_URL must be a postgres:// or postgresql:// URL'],
    ['PETSTORE_SHUTDOWN_TIMEOUT_MS', '1e4', 'PETSTORE_SHUTDOWN_TIMEOUT_MS must be a whole number, got "1e4"'],
  ])('refuses %s=%s, naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new ConfigError(message));
  });
});

test('the store location shown in logs and banners never carries a password', () => {
  const config = loadConfig({ PETSTORE_DATABASE_URL: 'postgres://app:s3cret@db.internal:5432/orders' });

  expect(storeLocation(config)).toBe('postgres://app@db.internal:5432/orders');
  expect(storeLocation(loadConfig({ PETSTORE_DB: '/var/lib/orders.db' }))).toBe('/var/lib/orders.db');
});
