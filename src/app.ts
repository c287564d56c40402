import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { OpenAPIV3 } from 'openapi-types';
import { SPEC_PATH, loadDocument } from './contract/document';
import { ApiError, toApiError } from './errors';
import { createDispatcher } from './http/backend';
import { createHandlers, type OperationHandlers } from './http/handlers';
import { errorReply, sendReply } from './http/reply';
import { silentLogger, type Logger } from './logger';
import type { Store } from './store';

/** Everything the app depends on, injected so that tests build a fresh app per test. */
export interface AppDeps {
  store: Store;
  logger?: Logger;
  /** The OpenAPI document to serve; defaults to `spec/openapi.yaml`. */
  document?: OpenAPIV3.Document;
  /** Replaces individual operation handlers, for tests that need a misbehaving one. */
  handlers?: Partial<OperationHandlers>;
  /** Orders per chunk of the streamed list (default 1000). */
  listChunkItems?: number;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the express app: infrastructure endpoints outside `/v1`, and the contract under it. */
export async function createApp(deps: AppDeps): Promise<express.Express> {
  const logger = deps.logger ?? silentLogger;
  const document = deps.document ?? loadDocument();
  const chunkItems = deps.listChunkItems ?? 1000;
  const dispatch = await createDispatcher({
    document,
    store: deps.store,
    logger,
    handlers: { ...createHandlers(deps.store, chunkItems), ...deps.handlers },
    chunkItems,
  });
  const served = Buffer.from(JSON.stringify(document), 'utf8');
  const changelog = fs.readFileSync(path.join(path.dirname(SPEC_PATH), '..', 'CHANGELOG.md'));

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  // Everything that is not one of the endpoints below goes to the contract's dispatcher.
  const dispatchContract = async (req: Request, res: Response): Promise<void> => {
    const rawPath = req.path;
    if (!decodable(rawPath)) {
      throw new ApiError('invalid_request', 'The request path contains malformed percent-encoding');
    }
    const queryIndex = req.originalUrl.indexOf('?');
    await dispatch(
      {
        method: req.method,
        path: rawPath,
        query: queryIndex === -1 ? '' : req.originalUrl.slice(queryIndex + 1),
        headers: req.headers,
        requestId: res.locals.requestId as string,
      },
      res,
    );
  };

  app.use((req: Request, res: Response, next: NextFunction) => {
    const incoming = req.get('x-request-id');
    res.locals.requestId = incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', res.locals.requestId as string);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // API requests, the hot path, go straight to the dispatcher instead of past every route below.
    const { path: rawPath } = req;
    if (rawPath.startsWith('/v1/') && rawPath !== '/v1/openapi.json') return dispatchContract(req, res);
    next();
  });

  app.get('/healthz', (_req, res) => sendReply(res, { status: 200, body: { status: 'ok' } }));

  app.get('/readyz', async (_req, res) => {
    try {
      await deps.store.ping();
      sendReply(res, { status: 200, body: { status: 'ready' } });
    } catch (err) {
      logger.warn({ err }, 'store is not ready');
      sendReply(res, errorReply(new ApiError('service_unavailable')));
    }
  });

  app.get('/v1/openapi.json', (_req, res) => {
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', served.length);
    res.end(served);
  });

  app.get('/changelog', (_req, res) => {
    res.setHeader('Content-Type', 'text/markdown; charset=utf-8');
    res.setHeader('Content-Length', changelog.length);
    res.end(changelog);
  });

  app.use(dispatchContract);

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

function decodable(rawPath: string): boolean {
  try {
    decodeURIComponent(rawPath);
    return true;
  } catch {
    return false;
  }
}
