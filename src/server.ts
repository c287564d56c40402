import http from 'node:http';
import v8 from 'node:v8';
import type { Socket } from 'node:net';
import type { Express } from 'express';
import { createApp } from './app';
import { DEFAULT_LIMITS, serviceOptions, type Config, type HttpLimits, type ServiceOptions } from './config';
import { ApiError } from './errors';
import { withAppPrototypes } from './http/app-prototypes';
import { rawErrorResponse } from './http/error-reply';
import { logOutputOf, silentLogger, type Logger } from './logger';
import { EventFeed, type EventFeedOptions } from './feed/event-feed';
import { createMetrics } from './metrics';
import { startRetention } from './retention';
import { loadDocument, specPath } from './contract/document';
import { webhookBodyCheck } from './contract/webhooks';
import { startDelivery } from './webhooks/delivery';
import { startDeliveryThread } from './webhooks/delivery-thread';
import type { AttemptOutcome, Store } from './store';

/** Options for a listening server. */
export interface ServerOptions {
  store: Store;
  logger: Logger;
  host: string;
  port: number;
  /** Share the port with other instances on this host (SO_REUSEPORT): each accepts the connections the kernel gives it. */
  reusePort?: boolean | undefined;
  /** How long to wait for in-flight requests on shutdown before closing their connections. */
  shutdownTimeoutMs: number;
  limits?: HttpLimits;
  /** Protects GET /metrics when set. */
  metricsToken?: string | undefined;
  /** What the service does by the deployment's choice (config.ts's defaults when absent). */
  service?: ServiceOptions | undefined;
  /** The change feed's retention and bound on waiting requests (EventFeed's defaults when absent). */
  feed?: Pick<EventFeedOptions, 'retentionDays' | 'maxWaiting'>;
  /**
   * The configuration `store` was opened with. When given, webhooks are delivered from a worker
   * thread with its own connection to the store, off the event loop that answers the API; when
   * not (a store made in this process alone), on that loop.
   */
  storeConfig?: Config | undefined;
}

/** A listening server and the way to stop it. */
export interface RunningServer {
  readonly url: string;
  /** Stops accepting, finishes in-flight requests, then closes the store. */
  close(): Promise<void>;
}

/** The response a connection is writing, so that a client error after its head never writes a second one. */
const ANSWERING: unique symbol = Symbol('petstore.answering');

declare module 'net' {
  interface Socket {
    /** The response the connection's request is being answered with, for a client error that arrives meanwhile. */
    [ANSWERING]?: http.ServerResponse;
  }
}

/**
 * An http.Server for an express app, whose requests and responses are built with the app's own
 * prototypes (see withAppPrototypes: the measured reason is there).
 *
 * The server enforces the request limits: a client too slow to send its headers or its request
 * gets 408, an oversized head 431, a request HTTP cannot parse 400, each an Error body on a
 * connection that is then closed. (The body limit is the app's: it needs the request.)
 */
export function createHttpServer(app: Express, limits: HttpLimits = DEFAULT_LIMITS, logger: Logger = silentLogger): http.Server {
  const { listener, IncomingMessage, ServerResponse } = withAppPrototypes(app);
  const server = http.createServer(
    {
      IncomingMessage,
      ServerResponse,
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // How often Node looks for requests past their timeouts; its default of 30 s would let a
      // slow client hold a connection far longer than the limits say.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
    },
    (req, res) => {
      req.socket[ANSWERING] = res;
      listener(req, res);
    },
  );
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    answerClientError(err, socket, socket[ANSWERING], logger);
  });
  server.setTimeout(limits.socketIdleTimeoutMs, (socket: Socket) => {
    logger.info({ remote: socket.remoteAddress, idleMs: limits.socketIdleTimeoutMs }, 'closing a connection with no traffic');
    socket.destroy();
  });
  return server;
}

/**
 * What a request that never reached the app gets: an Error, then the connection closes. A
 * connection whose last response has started (a timeout in the middle of a streamed list) is only
 * closed: a second head would corrupt the first response.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket, last: http.ServerResponse | undefined, logger: Logger): void {
  if (err.code === 'ECONNRESET' || !socket.writable || (last !== undefined && last.headersSent && !last.writableFinished)) {
    socket.destroy();
    return;
  }
  const error =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new ApiError('invalid_request', 'The request headers are too large', {}, 431)
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new ApiError('invalid_request', 'The request was not received in time', {}, 408)
        : new ApiError('invalid_request', 'The request is not valid HTTP');
  logger.info({ code: err.code, status: error.status, remote: socket.remoteAddress }, 'client error');
  socket.end(rawErrorResponse(error));
}

/** Starts the HTTP server. Only this module listens; the CLI wires signals to `close`. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const { store, logger } = options;
  const limits = options.limits ?? DEFAULT_LIMITS;
  const service = options.service ?? serviceOptions();
  const logOutput = logOutputOf(logger);
  const metrics = createMetrics({ processMetrics: true, token: options.metricsToken, logDrops: logOutput && (() => logOutput.dropped) });
  const feed = new EventFeed(store, { ...options.feed, onWaiting: (count) => metrics.eventWaits(count) });
  const stopCounting = store.onEventsWritten((counts) => metrics.eventsWritten(counts));
  const app = await createApp({
    store,
    logger,
    maxBodyBytes: limits.maxBodyBytes,
    metrics,
    feed,
    ...service,
  });
  const stopRetention = startRetention(store, { eventDays: feed.retentionDays, idempotencyHours: service.idempotencyHours }, logger);
  // Webhooks are sent beside the requests, from the feed, each body checked against v3's document
  // first: from a thread of their own when the store can be opened there.
  const told = {
    onAttempt: (outcome: AttemptOutcome) => metrics.webhookAttempt(outcome),
    onLag: (endpoint: string, seconds: number) => metrics.webhookLag(endpoint, seconds),
    onLagGone: (endpoint: string) => metrics.webhookLagGone(endpoint),
    onDisabledCount: (count: number) => metrics.webhookEndpointsDisabled(count),
  };
  const delivery =
    options.storeConfig !== undefined
      ? startDeliveryThread({
          config: options.storeConfig,
          webhooks: service.webhooks,
          logger,
          log: store,
          webhookStore: store.webhooks,
          ...told,
        })
      : startDelivery({
          log: store,
          webhooks: store.webhooks,
          logger,
          rules: service.webhooks,
          schedule: service.webhooks.retrySchedule,
          attemptTimeoutMs: service.webhooks.attemptTimeoutMs,
          check: await webhookBodyCheck(loadDocument(specPath('v3')), 'v3'),
          ...told,
        });
  const server = createHttpServer(app, limits, logger);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, host: options.host, reusePort: options.reusePort ?? false }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address();
  if (bound === null || typeof bound === 'string') throw new Error('the server is not listening on a TCP port');
  const { address, port } = bound;
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const drained = new Promise<void>((resolve) => server.close(() => resolve()));
      // Requests waiting for events are answered now (an empty page, their cursor unchanged), so
      // that they do not hold the drain for the rest of their wait.
      feed.close();
      stopRetention();
      stopCounting();
      server.closeIdleConnections();
      const timer = setTimeout(() => {
        logger.warn({ timeoutMs: options.shutdownTimeoutMs }, 'shutdown timeout reached; closing open connections');
        server.closeAllConnections();
      }, options.shutdownTimeoutMs);
      timer.unref();
      // Deliveries end with the requests: each worker finishes its attempt and gives its endpoint up.
      await Promise.all([drained, delivery.stop()]);
      clearTimeout(timer);
      await store.close();
    })();
    return closing;
  };

  return { url, close };
}

/** The longest an exit waits for its last log lines: a reader that does not read must not hold the process. */
const LOG_DRAIN_MS = 1000;

/**
 * The V8 flags `serve` sets for its own process, before it builds the app.
 *
 * `--no-allocation-site-pretenuring`: V8 watches where objects are made, and when most of one
 * place's objects outlive a young-generation collection, it makes that place's later objects in the
 * old generation at once. A list streamed in chunks defeats that guess: a collection that lands
 * while a chunk is being made finds the whole chunk alive, and V8 then makes every later row, order
 * and string of the list in the old generation, where they stay until a full collection
 * (docs/operations.md, "Memory"). A server's objects live for a request, so the guess buys it
 * nothing. The flag takes effect when set at run time, so the process sets it; the operator's
 * command line need not.
 */
export const SERVE_V8_FLAGS: readonly string[] = ['--no-allocation-site-pretenuring'];

/** Sets SERVE_V8_FLAGS in this process. */
export function setServeV8Flags(): void {
  for (const flag of SERVE_V8_FLAGS) v8.setFlagsFromString(flag);
}

/**
 * Logs anything that escapes every handler as fatal, with its stack, waits a moment for the log
 * to be written, and exits 1: after an uncaught exception the process's state is unknown, so it
 * must not keep serving.
 */
export function exitOnFatalErrors(logger: Logger): void {
  const fatal = (err: unknown, origin: string): void => {
    logger.fatal({ err, origin }, 'fatal error; exiting');
    exitAfterLogs(1, logger, LOG_DRAIN_MS);
  };
  process.once('uncaughtException', (err, origin) => fatal(err, origin));
  process.once('unhandledRejection', (reason) => fatal(reason, 'unhandledRejection'));
}

/**
 * Closes the server on SIGTERM or SIGINT, then exits 0 (1 if closing failed). The exit comes within
 * `shutdownTimeoutMs` plus two seconds, whatever state the log destination or the store is in.
 */
export function closeOnSignals(server: RunningServer, logger: Logger, shutdownTimeoutMs: number): void {
  const onSignal = (signal: NodeJS.Signals): void => {
    const deadline = Date.now() + shutdownTimeoutMs + LOG_DRAIN_MS;
    logger.info({ signal }, 'shutting down');
    const logWait = (): number => Math.min(LOG_DRAIN_MS, Math.max(100, deadline - Date.now()));
    // The drain closes connections at its timeout; this is for a store that does not close.
    setTimeout(() => {
      logger.error({ timeoutMs: shutdownTimeoutMs }, 'shutdown did not finish in time; exiting');
      exitAfterLogs(1, logger, 100);
    }, shutdownTimeoutMs + LOG_DRAIN_MS).unref();
    server.close().then(
      () => {
        logger.info('stopped');
        exitAfterLogs(0, logger, logWait());
      },
      (err: unknown) => {
        logger.fatal({ err }, 'shutdown failed');
        exitAfterLogs(1, logger, logWait());
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}

/** Exits once the logger's output has written what it holds, or after `waitMs`, whichever comes first. */
function exitAfterLogs(code: number, logger: Logger, waitMs: number): void {
  const output = logOutputOf(logger);
  const exit = (): never => process.exit(code);
  if (output === undefined) {
    logger.flush();
    exit();
  } else void output.drain(waitMs).then(exit, exit);
}
