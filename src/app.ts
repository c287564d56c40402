import fs from 'node:fs';
import path from 'node:path';
import express from 'express';
import type { OpenAPIV3 } from 'openapi-types';
import { SPEC_PATH, loadDocument, specPath } from './contract/document';
import type { ApiVersion } from './contract/types';
import { DEFAULT_ADMISSION, DEFAULT_LIMITS, type AdmissionLimits } from './config';
import { ApiError } from './errors';
import { createAdmission } from './http/admission';
import { createDispatcher, type Dispatch } from './http/dispatcher';
import { docsRouter } from './http/docs';
import { EventFeed } from './feed/event-feed';
import { v1Handlers } from './handlers/v1';
import { v2Handlers } from './handlers/v2';
import type { HandlerDefinitions, OperationHandlers } from './http/define-handler';
import { createPipeline } from './http/pipeline';
import { sendReply } from './http/reply';
import { answeredBy } from './http/request-context';
import { silentLogger, type Logger } from './logger';
import { createMetrics, type AuthRefusalReason, type Metrics } from './metrics';
import type { Policy } from './rate-policy';
import type { Store } from './store';

/** Everything the app depends on, injected so that tests build a fresh app per test. */
export interface AppDeps {
  store: Store;
  logger?: Logger;
  /** The v1 document to serve; defaults to `spec/openapi.yaml`. */
  document?: OpenAPIV3.Document;
  /** Handler modules beside the project's, for a v1 document with operations spec/openapi.yaml lacks. */
  modules?: Partial<HandlerDefinitions<'v1'>>;
  /** Replaces individual v1 operation handlers, for tests that need a misbehaving one. */
  handlers?: Partial<OperationHandlers<'v1'>>;
  /** The same three for v2: its document (default `spec/openapi-v2.yaml`), extra modules, and replaced handlers. */
  v2?: {
    document?: OpenAPIV3.Document;
    modules?: Partial<HandlerDefinitions<'v2'>>;
    handlers?: Partial<OperationHandlers<'v2'>>;
  };
  /** Orders per chunk of the streamed list (default 1000). */
  listChunkItems?: number;
  /** Largest request body accepted, in bytes (default 16 KiB). */
  maxBodyBytes?: number;
  /** Where request counts and durations go, served at /metrics (default: a registry of the app's own). */
  metrics?: Metrics;
  /** The change feed's waiting requests and retention (default: the defaults of EventFeed, on `store`). */
  feed?: EventFeed;
  /** How many lists and pages run at once, and how long more may wait (default: DEFAULT_ADMISSION). */
  admission?: AdmissionLimits;
  /** The rate-limit policies of every key without its own (PETSTORE_RATE_LIMIT; default: none, no limit). */
  rateLimit?: readonly Policy[];
}

/** The paths the app answers itself, outside the contract; everything else goes to the contract's dispatcher. */
const ENDPOINTS = new Set(['/healthz', '/readyz', '/v1/openapi.json', '/v2/openapi.json', '/changelog', '/metrics']);
const isEndpoint = (path: string): boolean => ENDPOINTS.has(path) || path === '/docs' || path.startsWith('/docs/');

/**
 * Builds the express app: the request pipeline (src/http/pipeline.ts), the infrastructure
 * endpoints, and each version of the contract under its prefix (`/v1`, `/v2`), from one store.
 */
export async function createApp(deps: AppDeps): Promise<express.Express> {
  const logger = deps.logger ?? silentLogger;
  const chunkItems = deps.listChunkItems ?? 1000;
  const metrics = deps.metrics ?? createMetrics();
  const secret = await deps.store.cursorSecret();
  const feed = deps.feed ?? new EventFeed(deps.store);
  const admission = createAdmission(deps.admission ?? DEFAULT_ADMISSION, {
    onShed: (operationId) => metrics.shed(operationId),
    onRunning: (count) => metrics.admitted(count),
    onWaiting: (count) => metrics.admissionWaiting(count),
    onWaited: (seconds) => metrics.admissionWait(seconds),
  });
  const documents = { v1: deps.document ?? loadDocument(), v2: deps.v2?.document ?? loadDocument(specPath('v2')) };
  const common = {
    store: deps.store,
    logger,
    secret,
    feed,
    admission,
    chunkItems,
    onViolation: (operationId: string, version: ApiVersion) => metrics.violation(operationId, version),
    onDeprecatedCall: (operationId: string, version: ApiVersion) => metrics.deprecatedCall(operationId, version),
    onKeyRefused: (reason: AuthRefusalReason) => metrics.authRefusal(reason),
    rateLimit: deps.rateLimit,
  };
  const dispatchers = new Map<string, Dispatch>([
    [
      '/v1/',
      await createDispatcher({
        ...common,
        version: 'v1',
        document: documents.v1,
        definitions: { ...v1Handlers, ...deps.modules },
        overrides: deps.handlers,
      }),
    ],
    [
      '/v2/',
      await createDispatcher({
        ...common,
        version: 'v2',
        document: documents.v2,
        definitions: { ...v2Handlers, ...deps.v2?.modules },
        overrides: deps.v2?.handlers,
      }),
    ],
  ]);
  // A path under no version's prefix is v1's to answer (its 404): v1's base address is the oldest promise.
  const fallback = dispatchers.get('/v1/');
  if (fallback === undefined) throw new Error('v1 is not served');
  const dispatch: Dispatch = (request, res) => (dispatchers.get(request.path.slice(0, 4)) ?? fallback)(request, res);
  const pipeline = createPipeline({
    logger,
    metrics,
    maxBodyBytes: deps.maxBodyBytes ?? DEFAULT_LIMITS.maxBodyBytes,
    dispatch,
    isEndpoint,
  });
  const served = new Map(
    Object.entries(documents).map(([version, document]) => [`/${version}/openapi.json`, Buffer.from(JSON.stringify(document), 'utf8')]),
  );
  const changelog = fs.readFileSync(path.join(path.dirname(SPEC_PATH), '..', 'CHANGELOG.md'));

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(pipeline.entry);

  app.get('/healthz', (req, res) => {
    sendReply(res, { status: 200, body: { status: 'ok' } }, answeredBy(req, 'healthz').id);
  });

  app.get('/readyz', async (req, res) => {
    const { id } = answeredBy(req, 'readyz');
    try {
      await deps.store.ping();
    } catch (err) {
      logger.warn({ err }, 'store is not ready');
      throw new ApiError('service_unavailable');
    }
    sendReply(res, { status: 200, body: { status: 'ready' } }, id);
  });

  for (const [route, body] of served) {
    app.get(route, (req, res) => {
      answeredBy(req, 'openapi');
      res.setHeader('Cache-Control', 'no-cache');
      res.setHeader('Content-Type', 'application/json');
      res.setHeader('Content-Length', body.length);
      res.end(body);
    });
  }

  app.get('/changelog', (req, res) => {
    answeredBy(req, 'changelog');
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('Content-Type', 'text/markdown; charset=utf-8');
    res.setHeader('Content-Length', changelog.length);
    res.end(changelog);
  });

  // Newest first: a reader arriving at /docs sees the version to build on.
  app.use(
    docsRouter(
      Object.entries(documents)
        .map(([version, document]): [string, OpenAPIV3.Document] => [version, document])
        .reverse(),
    ),
  );

  app.get('/metrics', async (req, res) => {
    answeredBy(req, 'metrics');
    if (!metrics.allowed(req.headers.authorization)) {
      throw new ApiError('unauthorized', 'A valid metrics token is required', {
        'WWW-Authenticate': 'Bearer realm="petstore-orders metrics"',
      });
    }
    const text = await metrics.registry.metrics();
    res.setHeader('Content-Type', metrics.registry.contentType);
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.end(text);
  });

  app.use(pipeline.unrouted);
  app.use(pipeline.renderThrown);
  return app;
}
