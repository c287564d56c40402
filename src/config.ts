import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { commaList } from './comma-list';
import { NO_LIMIT, parsePolicies, type Policy } from './rate-policy';
import { errorMessage } from './thrown';
import { ATTEMPT_TIMEOUT_MS, DEFAULT_RETRY_SCHEDULE, parseSchedule } from './webhooks/schedule';

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
  /**
   * Whether the port may be shared with other instances on the same host (SO_REUSEPORT), the
   * kernel spreading new connections among them (PETSTORE_REUSE_PORT).
   */
  readonly reusePort: boolean;
  /** How long a shutdown waits for in-flight requests before closing their connections. */
  readonly shutdownTimeoutMs: number;
  /** How long a store operation waits for another connection's lock (or a free PostgreSQL connection) before answering 503. */
  readonly busyTimeoutMs: number;
  readonly postgres: { readonly poolSize: number; readonly statementTimeoutMs: number };
  readonly limits: HttpLimits;
  readonly logLevel: LogLevel;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`; when unset, it is open. */
  readonly metricsToken: string | undefined;
  /** How many lists and pages run at once, and how long more of them may wait before a 503. */
  readonly admission: AdmissionLimits;
  /** The change feed: days its events are kept, and how many requests may wait for events at once. */
  readonly feed: { readonly retentionDays: number; readonly maxWaiting: number };
  /** The rate-limit policies of every key without its own (PETSTORE_RATE_LIMIT); none: no limit. */
  readonly rateLimit: readonly Policy[];
  /** The origins whose web pages may call the API (PETSTORE_CORS_ORIGINS); none by default. */
  readonly corsOrigins: readonly string[];
  /** Hours a placement's Idempotency-Key is kept (PETSTORE_IDEMPOTENCY_HOURS). */
  readonly idempotencyHours: number;
  /** Where webhooks may be sent, and when a failed delivery is tried again. */
  readonly webhooks: WebhookOptions;
  /**
   * How the CLI's commands are run here, for the commands the banners suggest: from a checkout,
   * `bin/petstore-orders`, after `scripts/with-node.sh 24` when that script runs this process on a
   * Node.js it installed (it sets PETSTORE_NODE_LINE), since the machine's own node would refuse
   * them; installed, `petstore-orders`.
   */
  readonly cliCommand: string;
}

/** What the HTTP server accepts from one client before it answers with an error and hangs up. */
export interface HttpLimits {
  /** Time allowed to receive a request's headers (slow-header clients). */
  readonly headersTimeoutMs: number;
  /** Time allowed to receive a whole request, headers and body. */
  readonly requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  readonly keepAliveTimeoutMs: number;
  /**
   * How long a connection may see no traffic either way, mid-request or mid-response, before it
   * is closed: a client that stops reading a streamed list must not hold its snapshot for ever.
   */
  readonly socketIdleTimeoutMs: number;
  /** Largest request head (request line and headers), in bytes. */
  readonly maxHeaderBytes: number;
  /** Largest request body, in bytes. */
  readonly maxBodyBytes: number;
}

/** How much of the expensive work one instance runs at once, and how long more of it may wait. */
export interface AdmissionLimits {
  /** Expensive requests (lists and pages) run at once (PETSTORE_ADMISSION_LIMIT). */
  readonly limit: number;
  /** Longest an expensive request waits for its turn before it is shed with a 503 (PETSTORE_ADMISSION_WAIT_MS). */
  readonly maxWaitMs: number;
  /** Expensive requests that may wait at once; one more is shed at once (PETSTORE_ADMISSION_QUEUE). */
  readonly queue: number;
}

/** The kinds of store a location can name. */
export type StoreKind = 'postgres' | 'sqlite';

/**
 * A location that starts with a URL's scheme (`postgres:`, `file:`, `https:`): taken as a path, it
 * would create a directory named after the scheme. A one-letter scheme is a Windows drive (`C:`).
 */
const URL_LIKE = /^[A-Za-z][A-Za-z0-9+.-]+:/;

/**
 * The kind of store a location names: a `postgres://` or `postgresql://` URL, or a SQLite file (a
 * path, or `sqlite:` and a path); undefined for a scheme no store has. A new dialect adds its form
 * here and its opener in src/store/open.ts.
 */
export function storeKindOf(location: string): StoreKind | undefined {
  if (/^postgres(ql)?:\/\//i.test(location)) return 'postgres';
  if (/^sqlite:/i.test(location) || !URL_LIKE.test(location)) return 'sqlite';
  return undefined;
}

/** The file a SQLite location names: the location itself, or what follows `sqlite:`. */
export function sqliteFile(location: string): string {
  return location.replace(/^sqlite:/i, '');
}

/** The limits when nothing overrides them. */
export const DEFAULT_LIMITS: HttpLimits = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  socketIdleTimeoutMs: 60_000,
  maxHeaderBytes: 16_384,
  maxBodyBytes: 16_384,
});

/** Hours a placement's Idempotency-Key is kept unless the deployment says otherwise (PETSTORE_IDEMPOTENCY_HOURS). */
export const DEFAULT_IDEMPOTENCY_HOURS = 24;

/** The change feed: days its events are kept, and how many requests may wait for events at once. */
export const DEFAULT_FEED = Object.freeze({ retentionDays: 30, maxWaiting: 1000 });

/** Where webhooks may be sent, and when a failed delivery is tried again. */
export interface WebhookOptions {
  /** Whether an endpoint's URL may be `http` (PETSTORE_WEBHOOK_ALLOW_HTTP); `https` only by default. */
  readonly allowHttp: boolean;
  /** Whether an endpoint may be at a loopback, private or link-local address (PETSTORE_WEBHOOK_ALLOW_PRIVATE), for local use. */
  readonly allowPrivate: boolean;
  /** The waits after each failed attempt, in milliseconds (PETSTORE_WEBHOOK_RETRY_SCHEDULE). */
  readonly retrySchedule: readonly number[];
  /** How long one attempt may take (PETSTORE_WEBHOOK_TIMEOUT_MS); an endpoint's lease is four of them. */
  readonly attemptTimeoutMs: number;
  /** The delivery thread's nice value on Linux, 0 to 19 (PETSTORE_WEBHOOK_NICE); never above the server's priority. */
  readonly nice: number;
}

/**
 * The delivery thread's nice value as shipped: 10. A core that the server's event loop also wants
 * gives the thread about a tenth of its time, so a burst of deliveries waits rather than slowing
 * the API. Not lower: inside one process the thread shares short-held locks with the event loop
 * (the garbage collector's task queue, malloc's, SQLite's shared memory), and a thread kept off
 * its core while it holds one holds the event loop too: on saturated cores nice 19 (about a
 * seventieth of a core) and SCHED_IDLE held the API's slowest writes back far longer than nice 10,
 * and nice 19 gained nothing in the API's rate beside delivery (docs/performance-log.md). Other
 * busy processes in the server's scheduling group (its cgroup, or its session where the kernel
 * groups by session) are served first too: on a host they keep busy, a lower value lets delivery
 * keep up (docs/operations.md, Webhooks).
 */
export const DEFAULT_WEBHOOK_NICE = 10;
/** The lowest priority of Linux's nice scale, and so the highest value PETSTORE_WEBHOOK_NICE takes. */
const MAX_NICE = 19;

/** Webhooks as shipped: `https`, public addresses, the schedule of DESIGN (5 s to 24 h). */
export const DEFAULT_WEBHOOKS: WebhookOptions = Object.freeze({
  allowHttp: false,
  allowPrivate: false,
  retrySchedule: DEFAULT_RETRY_SCHEDULE,
  attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
  nice: DEFAULT_WEBHOOK_NICE,
});

/** Webhooks for a demo on one machine: its receivers are local, so `http` and loopback are allowed. */
export const LOCAL_WEBHOOKS: WebhookOptions = Object.freeze({ ...DEFAULT_WEBHOOKS, allowHttp: true, allowPrivate: true });

/** Orders per chunk of a streamed list: each chunk one read of the store and one write to the socket. */
export const DEFAULT_LIST_CHUNK_ITEMS = 1000;

/**
 * What the service does by the deployment's choice, read once at start and handed whole to what
 * serves requests: no layer reads one of these alone, or has a default of its own for it.
 */
export interface ServiceOptions {
  /** How many lists and pages run at once, and how long more of them may wait before a 503. */
  readonly admission: AdmissionLimits;
  /** The rate-limit policies of every key without its own (PETSTORE_RATE_LIMIT); none: no limit. */
  readonly rateLimit: readonly Policy[];
  /** The origins whose web pages may call the API (PETSTORE_CORS_ORIGINS); none by default. */
  readonly corsOrigins: readonly string[];
  /** Hours a placement's Idempotency-Key is kept (PETSTORE_IDEMPOTENCY_HOURS); older records are removed every hour. */
  readonly idempotencyHours: number;
  /** Orders per chunk of a streamed list. */
  readonly listChunkItems: number;
  /** Where webhooks may be sent, and when a failed delivery is tried again. */
  readonly webhooks: WebhookOptions;
}

/** The service's options: those given, and this file's default for each of the others. */
export function serviceOptions(given: Partial<ServiceOptions> = {}): ServiceOptions {
  return {
    admission: given.admission ?? DEFAULT_ADMISSION,
    rateLimit: given.rateLimit ?? [],
    corsOrigins: given.corsOrigins ?? [],
    idempotencyHours: given.idempotencyHours ?? DEFAULT_IDEMPOTENCY_HOURS,
    listChunkItems: given.listChunkItems ?? DEFAULT_LIST_CHUNK_ITEMS,
    webhooks: given.webhooks ?? DEFAULT_WEBHOOKS,
  };
}

/** The service's options a configuration gives. */
export function serviceOptionsOf(config: Config): ServiceOptions {
  const { admission, rateLimit, corsOrigins, idempotencyHours, webhooks } = config;
  return serviceOptions({ admission, rateLimit, corsOrigins, idempotencyHours, webhooks });
}

/**
 * Expensive requests (lists and pages) run at once: sixteen per core the process may use (at least
 * 16). A streamed list spends most of its time waiting for its client to read, not on a core, so a
 * limit near the cores leaves them idle. More wait, first come first served, up to half a second,
 * and then are shed with a 503 and Retry-After; past 1,024 waiting, one more is shed at once. A
 * shed request that waited costs a client that ignores Retry-After one request per half second,
 * not a flood of them. The measurements behind each choice are in docs/performance-log.md.
 */
export const DEFAULT_ADMISSION = Object.freeze({ limit: Math.max(16, 16 * os.availableParallelism()), maxWaitMs: 500, queue: 1024 });

/**
 * The default limit of an instance that shares its port (PETSTORE_REUSE_PORT): such instances run
 * one per core, so each takes one core's share. Together they admit what one instance would, and
 * each loop's turns stay short enough to accept the connections the kernel gives it
 * (docs/operations.md, "Overload").
 */
export const SHARED_PORT_ADMISSION_LIMIT = 16;

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
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: ConfigOverrides = {}): Config {
  const databaseUrl = nonEmpty(env.PETSTORE_DATABASE_URL);
  if (databaseUrl !== undefined && storeKindOf(databaseUrl) !== 'postgres') {
    throw new ConfigError('PETSTORE_DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  const dbPath = sqliteFile(overrides.dbPath ?? nonEmpty(env.PETSTORE_DB) ?? path.join('data', 'petstore.db'));
  if (storeKindOf(dbPath) !== 'sqlite') {
    const name = overrides.dbPath !== undefined ? '--db' : 'PETSTORE_DB';
    throw new ConfigError(
      `${name} is the path of a SQLite file, not a URL, got "${dbPath.replace(/\/\/[^@/]*@/, '//…@')}": to use PostgreSQL, set PETSTORE_DATABASE_URL=postgres://…`,
    );
  }
  const reusePort = flag(env, 'PETSTORE_REUSE_PORT', false);
  return Object.freeze({
    production: env.NODE_ENV === 'production',
    cliCommand: cliCommand(env),
    dbPath: path.resolve(dbPath),
    databaseUrl,
    host: overrides.host ?? nonEmpty(env.HOST) ?? '127.0.0.1',
    port: parsePort(overrides.port ?? nonEmpty(env.PORT) ?? '8080', overrides.port !== undefined ? '--port' : 'PORT'),
    reusePort,
    shutdownTimeoutMs: number(env, 'PETSTORE_SHUTDOWN_TIMEOUT_MS', 10_000),
    busyTimeoutMs: number(env, 'PETSTORE_BUSY_TIMEOUT_MS', 2000),
    postgres: Object.freeze({
      poolSize: number(env, 'PETSTORE_PG_POOL_SIZE', 10, 1),
      statementTimeoutMs: number(env, 'PETSTORE_PG_STATEMENT_TIMEOUT_MS', 5000, 1),
    }),
    limits: Object.freeze({
      headersTimeoutMs: number(env, 'PETSTORE_HEADERS_TIMEOUT_MS', DEFAULT_LIMITS.headersTimeoutMs, 1),
      requestTimeoutMs: number(env, 'PETSTORE_REQUEST_TIMEOUT_MS', DEFAULT_LIMITS.requestTimeoutMs, 1),
      keepAliveTimeoutMs: number(env, 'PETSTORE_KEEP_ALIVE_TIMEOUT_MS', DEFAULT_LIMITS.keepAliveTimeoutMs, 1),
      socketIdleTimeoutMs: number(env, 'PETSTORE_SOCKET_IDLE_TIMEOUT_MS', DEFAULT_LIMITS.socketIdleTimeoutMs, 1),
      maxHeaderBytes: number(env, 'PETSTORE_MAX_HEADER_BYTES', DEFAULT_LIMITS.maxHeaderBytes, 1024),
      maxBodyBytes: number(env, 'PETSTORE_MAX_BODY_BYTES', DEFAULT_LIMITS.maxBodyBytes),
    }),
    logLevel: parseLogLevel(nonEmpty(env.LOG_LEVEL) ?? 'info'),
    metricsToken: nonEmpty(env.PETSTORE_METRICS_TOKEN),
    admission: Object.freeze({
      limit: number(env, 'PETSTORE_ADMISSION_LIMIT', reusePort ? SHARED_PORT_ADMISSION_LIMIT : DEFAULT_ADMISSION.limit, 1),
      maxWaitMs: number(env, 'PETSTORE_ADMISSION_WAIT_MS', DEFAULT_ADMISSION.maxWaitMs),
      queue: number(env, 'PETSTORE_ADMISSION_QUEUE', DEFAULT_ADMISSION.queue),
    }),
    feed: Object.freeze({
      retentionDays: number(env, 'PETSTORE_EVENT_RETENTION_DAYS', DEFAULT_FEED.retentionDays, 1),
      maxWaiting: number(env, 'PETSTORE_FEED_MAX_WAITING', DEFAULT_FEED.maxWaiting, 1),
    }),
    rateLimit: Object.freeze(rateLimit(env)),
    corsOrigins: Object.freeze(corsOrigins(env)),
    idempotencyHours: number(env, 'PETSTORE_IDEMPOTENCY_HOURS', DEFAULT_IDEMPOTENCY_HOURS, 1),
    webhooks: Object.freeze({
      allowHttp: flag(env, 'PETSTORE_WEBHOOK_ALLOW_HTTP', false),
      allowPrivate: flag(env, 'PETSTORE_WEBHOOK_ALLOW_PRIVATE', false),
      retrySchedule: retrySchedule(env),
      attemptTimeoutMs: number(env, 'PETSTORE_WEBHOOK_TIMEOUT_MS', ATTEMPT_TIMEOUT_MS, 100),
      nice: number(env, 'PETSTORE_WEBHOOK_NICE', DEFAULT_WEBHOOK_NICE, 0, MAX_NICE),
    }),
  });
}

/** An origin as a browser sends it (RFC 6454): scheme, host and an optional port; no path, no trailing slash. */
const ORIGIN = /^https?:\/\/(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/;

/** PETSTORE_CORS_ORIGINS: comma-separated origins (`https://dashboard.example.com`); unset: none. */
function corsOrigins(env: NodeJS.ProcessEnv): string[] {
  const raw = nonEmpty(env.PETSTORE_CORS_ORIGINS);
  if (raw === undefined) return [];
  const origins = raw.split(',').map((origin) => origin.trim());
  for (const origin of origins) {
    if (!ORIGIN.test(origin)) {
      throw new ConfigError(
        `PETSTORE_CORS_ORIGINS must be comma-separated origins in lower case, each http:// or https:// and a host with an optional port, without a path (https://dashboard.example.com), got "${origin}"`,
      );
    }
  }
  return [...new Set(origins)];
}

/** Config.cliCommand: a checkout has bin/petstore-orders where `npm start` runs. */
function cliCommand(env: NodeJS.ProcessEnv): string {
  if (!fs.existsSync(path.join('bin', 'petstore-orders'))) return 'petstore-orders';
  const line = env.PETSTORE_NODE_LINE ?? '';
  return `${/^\d+$/.test(line) ? `scripts/with-node.sh ${line} ` : ''}bin/petstore-orders`;
}

/** PETSTORE_RATE_LIMIT: comma-separated policies (`600/min,100000/day`), or `none`; unset: none. */
function rateLimit(env: NodeJS.ProcessEnv): Policy[] {
  const raw = nonEmpty(env.PETSTORE_RATE_LIMIT);
  if (raw === undefined) return [];
  try {
    const policies = parsePolicies('PETSTORE_RATE_LIMIT', commaList('PETSTORE_RATE_LIMIT', raw, 'policy'));
    return policies === NO_LIMIT ? [] : policies;
  } catch (err) {
    throw new ConfigError(errorMessage(err));
  }
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

/** A whole-number variable (milliseconds, bytes, a nice value), from `min` to `max`, or its default when unset. */
function number(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max?: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw.trim()) || Number(raw) < min || (max !== undefined && Number(raw) > max)) {
    const bounds = max !== undefined ? ` from ${min} to ${max}` : min > 0 ? ` of at least ${min}` : '';
    throw new ConfigError(`${name} must be a whole number${bounds}, got "${raw}"`);
  }
  return Number(raw);
}

/** PETSTORE_WEBHOOK_RETRY_SCHEDULE: durations separated by commas, or the schedule as shipped. */
function retrySchedule(env: NodeJS.ProcessEnv): readonly number[] {
  const raw = nonEmpty(env.PETSTORE_WEBHOOK_RETRY_SCHEDULE);
  if (raw === undefined) return DEFAULT_RETRY_SCHEDULE;
  const parsed = parseSchedule(raw);
  if ('problem' in parsed) throw new ConfigError(`PETSTORE_WEBHOOK_RETRY_SCHEDULE ${parsed.problem}, got "${raw}"`);
  return parsed;
}

/** A yes-or-no variable: `true` or `1`, `false` or `0` (any case), or its default when unset. */
function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const value = raw.trim().toLowerCase();
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ConfigError(`${name} must be true, false, 1 or 0, got "${raw}"`);
}

function parseLogLevel(raw: string): LogLevel {
  const level = LOG_LEVELS.find((known) => known === raw.toLowerCase());
  if (level === undefined) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  }
  return level;
}
