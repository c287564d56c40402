import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { OpenAPIV3 } from 'openapi-types';
import { SPEC_PATH, loadDocument } from './contract/document';
import { DEFAULT_LIMITS } from './config';
import { ApiError, toApiError } from './errors';
import { createDispatcher, type RoutedRequest } from './http/backend';
import { docsRouter } from './http/docs';
import { v1Handlers } from './handlers/v1';
import type { HandlerDefinitions, OperationHandlers } from './http/handlers';
import { errorReply, sendReply } from './http/reply';
import { silentLogger, type Logger } from './logger';
import { createMetrics, type Metrics } from './metrics';
import type { Store } from './store';

/** Everything the app depends on, injected so that tests build a fresh app per test. */
export interface AppDeps {
  store: Store;
  logger?: Logger;
  /** The OpenAPI document to serve; defaults to `spec/openapi.yaml`. */
  document?: OpenAPIV3.Document;
  /** Handler modules beside the project's, for a document with operations spec/openapi.yaml lacks. */
  modules?: Partial<HandlerDefinitions>;
  /** Replaces individual operation handlers, for tests that need a misbehaving one. */
  handlers?: Partial<OperationHandlers>;
  /** Orders per chunk of the streamed list (default 1000). */
  listChunkItems?: number;
  /** Largest request body accepted, in bytes (default 16 KiB); no v1 operation takes one. */
  maxBodyBytes?: number;
  /** Where request counts and durations go, served at /metrics (default: a registry of the app's own). */
  metrics?: Metrics;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the express app: infrastructure endpoints outside `/v1`, and the contract under it. */
export async function createApp(deps: AppDeps): Promise<express.Express> {
  const logger = deps.logger ?? silentLogger;
  const document = deps.document ?? loadDocument();
  const chunkItems = deps.listChunkItems ?? 1000;
  const maxBodyBytes = deps.maxBodyBytes ?? DEFAULT_LIMITS.maxBodyBytes;
  const metrics = deps.metrics ?? createMetrics();
  const dispatch = await createDispatcher({
    document,
    store: deps.store,
    logger,
    definitions: { ...v1Handlers, ...deps.modules },
    overrides: deps.handlers,
    chunkItems,
    onViolation: (operationId) => metrics.violation(operationId),
  });
  const served = Buffer.from(JSON.stringify(document), 'utf8');
  const changelog = fs.readFileSync(path.join(path.dirname(SPEC_PATH), '..', 'CHANGELOG.md'));

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  // Everything that is not one of the endpoints below goes to the contract's dispatcher.
  const dispatchContract = async (req: Request, res: Response, body?: Buffer): Promise<void> => {
    const rawPath = req.path;
    if (!decodable(rawPath)) {
      throw new ApiError('invalid_request', 'The request path contains malformed percent-encoding');
    }
    const queryIndex = req.originalUrl.indexOf('?');
    const routed: RoutedRequest = {
      method: req.method,
      path: rawPath,
      query: queryIndex === -1 ? '' : req.originalUrl.slice(queryIndex + 1),
      headers: req.headers,
      requestId: res.locals.requestId as string,
      body,
    };
    // The request log and the metrics read the operationId the dispatcher matched.
    res.locals.routed = routed;
    await dispatch(routed, res);
  };

  // API requests, the hot path, go straight to the dispatcher instead of past every route below.
  const route = (req: Request, res: Response, next: NextFunction, body?: Buffer): Promise<void> | void => {
    const { path: rawPath } = req;
    if (rawPath.startsWith('/v1/') && rawPath !== '/v1/openapi.json') return dispatchContract(req, res, body);
    next();
  };

  app.use((req: Request, res: Response, next: NextFunction) => {
    const incoming = req.get('x-request-id');
    res.locals.requestId = incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    recordWhenDone(req, res, logger, metrics);
    res.setHeader('X-Request-Id', res.locals.requestId as string);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // Responses carry orders and keyed answers; no cache may keep them. A client that keeps a
    // list itself can still revalidate it with If-None-Match.
    res.setHeader('Cache-Control', 'no-store');
    // A body over the limit is refused before anything else happens; one within it is read whole
    // before the request is routed, and the dispatcher parses it for an operation that declares one.
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > maxBodyBytes) return sendReply(res, errorReply(bodyTooLarge(maxBodyBytes)));
    if ((declared === undefined || declared === '0') && req.headers['transfer-encoding'] === undefined) {
      return route(req, res, next);
    }
    return readBody(req, maxBodyBytes).then((outcome) => {
      if (outcome === 'too_large') sendReply(res, errorReply(bodyTooLarge(maxBodyBytes)));
      else if (outcome !== 'aborted') return route(req, res, next, outcome);
    });
  });

  app.get('/healthz', (_req, res) => {
    res.locals.endpoint = 'healthz';
    sendReply(res, { status: 200, body: { status: 'ok' } });
  });

  app.get('/readyz', async (_req, res) => {
    res.locals.endpoint = 'readyz';
    try {
      await deps.store.ping();
      sendReply(res, { status: 200, body: { status: 'ready' } });
    } catch (err) {
      logger.warn({ err }, 'store is not ready');
      sendReply(res, errorReply(new ApiError('service_unavailable')));
    }
  });

  app.get('/v1/openapi.json', (_req, res) => {
    res.locals.endpoint = 'openapi';
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', served.length);
    res.end(served);
  });

  app.get('/changelog', (_req, res) => {
    res.locals.endpoint = 'changelog';
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Content-Type', 'text/markdown; charset=utf-8');
    res.setHeader('Content-Length', changelog.length);
    res.end(changelog);
  });

  app.use(docsRouter());

  app.get('/metrics', async (req, res) => {
    res.locals.endpoint = 'metrics';
    if (!metrics.allowed(req.headers.authorization)) {
      sendReply(
        res,
        errorReply(
          new ApiError('unauthorized', 'A valid metrics token is required', {
            'WWW-Authenticate': 'Bearer realm="petstore-orders metrics"',
          }),
        ),
      );
      return;
    }
    const text = await metrics.registry.metrics();
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.end(text);
  });

  app.use((req: Request, res: Response) => dispatchContract(req, res));

  // The one place where anything thrown outside a handler becomes an Error response.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const { error, expected } = toApiError(err);
    if (!expected) logger.error({ err, requestId: res.locals.requestId }, 'request failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendReply(res, errorReply(error));
  });

  return app;
}

/**
 * Once the response is over (sent, or abandoned by the client), counts it in the metrics and logs
 * one line for it: never its headers, so never a key.
 */
function recordWhenDone(req: Request, res: Response, logger: Logger, metrics: Metrics): void {
  const started = process.hrtime.bigint();
  res.once('close', () => {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const operation =
      (res.locals.routed as RoutedRequest | undefined)?.operationId ?? (res.locals.endpoint as string | undefined) ?? 'none';
    metrics.observe(operation, req.method, res.statusCode, seconds);
    logger.info(
      {
        requestId: res.locals.requestId as string,
        method: req.method,
        path: req.path,
        operationId: operation,
        status: res.statusCode,
        durationMs: Math.round(seconds * 1e6) / 1e3,
        ...(res.writableFinished ? {} : { aborted: true }),
      },
      'request',
    );
  });
}

/** The 413 for a body over the limit; the connection closes after it, with the rest of the body unread. */
function bodyTooLarge(limit: number): ApiError {
  return new ApiError('invalid_request', `The request body exceeds ${limit} bytes`, { Connection: 'close' }, 413);
}

/**
 * Reads a request body whole, so that a request is complete before it is answered: the body's
 * bytes, `too_large` as soon as it passes the limit, or `aborted` if the client went away first.
 */
function readBody(req: Request, limit: number): Promise<Buffer | 'too_large' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      req.pause();
      resolve('too_large');
    };
    const whole = (): void => resolve(Buffer.concat(chunks, received));
    req.on('data', onData);
    req.once('end', whole);
    req.once('close', () => (req.complete ? whole() : resolve('aborted')));
    req.once('error', () => resolve('aborted'));
  });
}

function decodable(rawPath: string): boolean {
  try {
    decodeURIComponent(rawPath);
    return true;
  } catch {
    return false;
  }
}
