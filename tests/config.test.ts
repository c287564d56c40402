import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  ConfigError,
  DEFAULT_ADMISSION,
  DEFAULT_LIMITS,
  DEFAULT_WEBHOOK_NICE,
  SHARED_PORT_ADMISSION_LIMIT,
  loadConfig,
} from '../src/config';
import { storeLocation } from '../src/store';
import { BIN, cliEnv } from './helpers/cli';
import { tempDir } from './helpers/temp-dir';

describe('loadConfig', () => {
  test('defaults when nothing is set', () => {
    const config = loadConfig({});

    expect(config.limits).toEqual(DEFAULT_LIMITS);
    expect(config.busyTimeoutMs).toBe(2000);
    expect(config.postgres).toEqual({ poolSize: 10, statementTimeoutMs: 5000 });
    expect(config.databaseUrl).toBeUndefined();
    expect(config.shutdownTimeoutMs).toBe(10_000);
    expect(config.port).toBe(8080);
    expect(config.webhooks.nice).toBe(DEFAULT_WEBHOOK_NICE);
    expect(DEFAULT_WEBHOOK_NICE).toBe(10);
    expect(Object.isFrozen(config) && Object.isFrozen(config.limits)).toBe(true);
  });

  test("PETSTORE_WEBHOOK_NICE sets the delivery thread's nice value, 0 to 19", () => {
    expect(loadConfig({ PETSTORE_WEBHOOK_NICE: '0' }).webhooks.nice).toBe(0);
    expect(loadConfig({ PETSTORE_WEBHOOK_NICE: '10' }).webhooks.nice).toBe(10);
    expect(loadConfig({ PETSTORE_WEBHOOK_NICE: '19' }).webhooks.nice).toBe(19);
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
    ['PETSTORE_REUSE_PORT', 'yes', 'PETSTORE_REUSE_PORT must be true, false, 1 or 0, got "yes"'],
    ...['20', '-1', '5.5', 'low'].map((value) => [
      'PETSTORE_WEBHOOK_NICE',
      value,
      `PETSTORE_WEBHOOK_NICE must be a whole number from 0 to 19, got "${value}"`,
    ]),
    [
      'PETSTORE_RATE_LIMIT',
      '600/minute',
      'PETSTORE_RATE_LIMIT must be N/UNIT, a whole number of at least 1 per s, min, h, day (600/min), or none, got "600/minute"',
    ],
    ['PETSTORE_RATE_LIMIT', '10/s,20/s', 'PETSTORE_RATE_LIMIT gives two policies per s, got "20/s"'],
    ['PETSTORE_RATE_LIMIT', 'none, 5/s', 'PETSTORE_RATE_LIMIT none cannot be given with a policy, got "none", "5/s"'],
    ...['https://a.example.com/', 'a.example.com', 'https://A.example.com', 'https://a.example.com/app', '*'].map((value) => [
      'PETSTORE_CORS_ORIGINS',
      `https://ok.example.com,${value}`,
      `PETSTORE_CORS_ORIGINS must be comma-separated origins in lower case, each http:// or https:// and a host with an optional port, without a path (https://dashboard.example.com), got "${value}"`,
    ]),
  ])('refuses %s=%s, naming the variable', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new ConfigError(message));
  });
});

test("an instance that shares its port admits one core's share of lists by default, and what PETSTORE_ADMISSION_LIMIT says", () => {
  expect(loadConfig({ PETSTORE_REUSE_PORT: 'true' }).admission.limit).toBe(SHARED_PORT_ADMISSION_LIMIT);
  expect(loadConfig({}).admission.limit).toBe(DEFAULT_ADMISSION.limit);
  expect(loadConfig({ PETSTORE_REUSE_PORT: 'true', PETSTORE_ADMISSION_LIMIT: '40' }).admission.limit).toBe(40);
});

test('PETSTORE_REUSE_PORT is off unless set to true or 1', () => {
  expect(loadConfig({}).reusePort).toBe(false);
  expect([' TRUE ', '1', 'false', '0', ''].map((value) => loadConfig({ PETSTORE_REUSE_PORT: value }).reusePort)).toEqual([
    true,
    true,
    false,
    false,
    false,
  ]);
});

test('the store location shown in logs and banners never carries a password', () => {
  const config = loadConfig({ PETSTORE_DATABASE_URL: 'postgres://app:s3cret@db.internal:5432/orders' });

  expect(storeLocation(config)).toBe('postgres://app@db.internal:5432/orders');
  expect(storeLocation(loadConfig({ PETSTORE_DB: '/var/lib/orders.db' }))).toBe('/var/lib/orders.db');
});

describe('a SQLite path that is a URL', () => {
  test.each([
    [{ PETSTORE_DB: 'postgres://app:s3cret@db.internal/orders' }, {}, 'PETSTORE_DB', 'postgres://…@db.internal/orders'],
    [{ PETSTORE_DB: 'postgresql:/orders' }, {}, 'PETSTORE_DB', 'postgresql:/orders'],
    [{}, { dbPath: 'postgres://db.internal/orders' }, '--db', 'postgres://db.internal/orders'],
  ])('is refused at start, naming PETSTORE_DATABASE_URL and never the password: %j %j', (env, overrides, name, shown) => {
    expect(() => loadConfig(env, overrides)).toThrow(
      new ConfigError(
        `${name} is the path of a SQLite file, not a URL, got "${shown}": to use PostgreSQL, set PETSTORE_DATABASE_URL=postgres://…`,
      ),
    );
  });

  test('a command given one exits 1 with that message and creates nothing', () => {
    const tmp = tempDir();
    try {
      const result = spawnSync(process.execPath, [BIN, 'keys', 'list'], {
        cwd: tmp.dir,
        env: cliEnv({ PETSTORE_DB: 'postgres://app@127.0.0.1:5432/orders' }),
        encoding: 'utf8',
      });

      expect(result.status).toBe(1);
      expect(result.stderr).toContain('PETSTORE_DB is the path of a SQLite file, not a URL');
      expect(result.stderr).toContain('set PETSTORE_DATABASE_URL=postgres://');
      expect(fs.readdirSync(tmp.dir)).toEqual([]);
    } finally {
      tmp.cleanup();
    }
  });

  test('a Windows-style drive letter is still a path', () => {
    expect(loadConfig({ PETSTORE_DB: 'C:data.db' }).dbPath).toMatch(/C:data\.db$/);
  });

  test('sqlite: and a path names that file; a scheme no store has is refused', () => {
    expect(loadConfig({ PETSTORE_DB: 'sqlite:data/orders.db' }).dbPath).toBe(path.resolve('data/orders.db'));
    expect(loadConfig({}, { dbPath: 'sqlite:/var/lib/orders.db' }).dbPath).toBe('/var/lib/orders.db');
    expect(() => loadConfig({ PETSTORE_DB: 'mysql://db.internal/orders' })).toThrow('PETSTORE_DB is the path of a SQLite file, not a URL');
    expect(() => loadConfig({ PETSTORE_DB: 'sqlite:postgres://db.internal/orders' })).toThrow('set PETSTORE_DATABASE_URL=postgres://');
  });
});

test('PETSTORE_RATE_LIMIT gives the policies of keys without their own: none when unset or none', () => {
  expect(loadConfig({}).rateLimit).toEqual([]);
  expect(loadConfig({ PETSTORE_RATE_LIMIT: 'none' }).rateLimit).toEqual([]);
  expect(loadConfig({ PETSTORE_RATE_LIMIT: '600/min, 100000/day' }).rateLimit).toEqual([
    { quota: 600, unit: 'min' },
    { quota: 100000, unit: 'day' },
  ]);
});

test('PETSTORE_CORS_ORIGINS lists the origins whose pages may call the API: none when unset', () => {
  expect(loadConfig({}).corsOrigins).toEqual([]);
  expect(
    loadConfig({ PETSTORE_CORS_ORIGINS: 'https://dashboard.example.com, http://localhost:3000,http://[::1]:8080' }).corsOrigins,
  ).toEqual(['https://dashboard.example.com', 'http://localhost:3000', 'http://[::1]:8080']);
});
