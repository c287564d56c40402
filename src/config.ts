import path from 'node:path';

/** The validated, frozen runtime configuration. Nothing else reads `process.env`. */
export interface Config {
  /** `production` disables everything invented for demos. */
  readonly production: boolean;
  /** Path of the SQLite database file. */
  readonly dbPath: string;
  /** PostgreSQL connection string, when the scale-out store is selected. */
  readonly databaseUrl: string | undefined;
  readonly host: string;
  readonly port: number;
  /** How long a shutdown waits for in-flight requests before closing their connections. */
  readonly shutdownTimeoutMs: number;
  readonly logLevel: LogLevel;
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Values given on the command line; they win over the environment. */
export interface ConfigOverrides {
  dbPath?: string | undefined;
  host?: string | undefined;
  port?: string | undefined;
}

/** A configuration value that is missing or malformed; the message names the variable or flag. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads the environment once, checks every value, and returns a frozen config. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: ConfigOverrides = {},
): Config {
  const databaseUrl = nonEmpty(env.PETSTORE_DATABASE_URL);
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('PETSTORE_DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  return Object.freeze({
    production: env.NODE_ENV === 'production',
    dbPath: path.resolve(overrides.dbPath ?? nonEmpty(env.PETSTORE_DB) ?? path.join('data', 'petstore.db')),
    databaseUrl,
    host: overrides.host ?? nonEmpty(env.HOST) ?? '127.0.0.1',
    port: parsePort(overrides.port ?? nonEmpty(env.PORT) ?? '8080', overrides.port !== undefined ? '--port' : 'PORT'),
    shutdownTimeoutMs: parseNonNegativeInt(
      nonEmpty(env.PETSTORE_SHUTDOWN_TIMEOUT_MS) ?? '10000',
      'PETSTORE_SHUTDOWN_TIMEOUT_MS',
    ),
    logLevel: parseLogLevel(nonEmpty(env.LOG_LEVEL) ?? 'info'),
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function parsePort(raw: string, name: string): number {
  const port = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(port >= 0 && port <= 65535)) {
    throw new ConfigError(`${name} must be a port number between 0 and 65535, got "${raw}"`);
  }
  return port;
}

function parseNonNegativeInt(raw: string, name: string): number {
  if (!/^\d{1,9}$/.test(raw)) {
    throw new ConfigError(`${name} must be a whole number of milliseconds, got "${raw}"`);
  }
  return Number(raw);
}

function parseLogLevel(raw: string): LogLevel {
  const level = raw.toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(level)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  }
  return level;
}
