import fs from 'node:fs';
import path from 'node:path';
import express from 'express';
import type { OpenAPIV3 } from 'openapi-types';
import { SPEC_PATH, loadDocument, specPath } from './contract/document';
import type { ApiVersion } from './contract/types';
import { DEFAULT_LIMITS, serviceOptions, type ServiceOptions } from './config';
import { ApiError } from './errors';
import { createAdmission } from './http/admission';
import { serveDirectly } from './http/app-prototypes';
import { createDispatcher, type Dispatch } from './http/dispatcher';
import { createCors } from './http/cors';
import { docsRouter } from './http/docs';
import { EventFeed } from './feed/event-feed';
import { versionHandlers, versions } from './handlers';
import type { HandlerDefinitions, OperationHandlers } from './http/define-handler';
import { createPipeline } from './http/pipeline';
import { sendReply } from './http/reply';
import { answeredBy } from './http/request-context';
import { silentLogger, type Logger } from './logger';
import { createMetrics, type AuthRefusalReason, type Metrics } from './metrics';
import type { Store } from './store';

/**
 * Everything the app depends on, injected so that tests build a fresh app per test; the service's
 * options (ServiceOptions, in config.ts) are given as they are, each one given or config.ts's default.
 */
export interface AppDeps extends Partial<ServiceOptions> {
  store: Store;
  logger?: Logger;
  /** The v1 document to serve; defaults to `spec/openapi.yaml`. */
  document?: OpenAPIV3.Document;
  /** Handler modules beside the project's, for a v1 document with operations spec/openapi.yaml lacks. */
  modules?: Partial<HandlerDefinitions<'v1'>>;
  /** Replaces individual v1 operation handlers, for tests that need a misbehaving one. */
  handlers?: Partial<OperationHandlers<'v1'>>;
  /** The same three for any version: its document (default: spec/documents.json's), extra modules, and replaced handlers. */
  versions?: { [V in ApiVersion]?: VersionDeps<V> };
  /** Largest request body accepted, in bytes (default 16 KiB). */
  maxBodyBytes?: number;
  /** Where request counts and durations go, served at /metrics (default: a registry of the app's own). */
  metrics?: Metrics;
  /** The change feed's waiting requests and retention (default: the defaults of EventFeed, on `store`). */
  feed?: EventFeed;
}

/** What a test may give one version of the app in place of the project's own. */
export interface VersionDeps<V extends ApiVersion> {
  document?: OpenAPIV3.Document;
  modules?: Partial<HandlerDefinitions<V>>;
  handlers?: Partial<OperationHandlers<V>>;
}

/** The handler modules of each version the app serves (src/handlers/index.ts, written by `npm run scaffold`). */
const HANDLERS: { readonly [V in ApiVersion]: HandlerDefinitions<V> } = versionHandlers;
/** The versions, in spec/documents.json's order. */
const VERSIONS: readonly ApiVersion[] = versions;

/** The paths the app answers itself, outside the contract; everything else goes to the contract's dispatcher. */
const ENDPOINTS = new Set(['/healthz', '/readyz', '/changelog', '/metrics', ...VERSIONS.map((version) => `/${version}/openapi.json`)]);
const isEndpoint = (path: string): boolean => ENDPOINTS.has(path) || path === '/docs' || path.startsWith('/docs/');

/** `/v2/` of `/v2/store/orders`: the prefix that names a path's version, if it has one. */
const prefixOf = (path: string): string => {
  const end = path.indexOf('/', 1);
  return end === -1 ? path : path.slice(0, end + 1);
};

/**
 * Builds the express app: the request pipeline (src/http/pipeline.ts), the infrastructure
 * endpoints, and each version of the contract under its prefix (`/v1`, `/v2`), from one store.
 */
export async function createApp(deps: AppDeps): Promise<express.Express> {
  const logger = deps.logger ?? silentLogger;
  const service = serviceOptions(deps);
  const metrics = deps.metrics ?? createMetrics();
  const secret = await deps.store.cursorSecret();
  const feed = deps.feed ?? new EventFeed(deps.store);
  const admission = createAdmission(service.admission, {
    onShed: (operationId) => metrics.shed(operationId),
    onRunning: (count) => metrics.admitted(count),
    onWaiting: (count) => metrics.admissionWaiting(count),
    onWaited: (seconds) => metrics.admissionWait(seconds),
  });
  // What the app serves of each version in place of the project's: v1's may also be given at the top.
  const versions: { [V in ApiVersion]?: VersionDeps<V> } = {
    ...deps.versions,
    v1: { document: deps.document, modules: deps.modules, handlers: deps.handlers, ...deps.versions?.v1 },
  };
  const given = <V extends ApiVersion>(version: V): VersionDeps<V> => versions[version] ?? {};
  const documents = new Map(VERSIONS.map((version) => [version, given(version).document ?? loadDocument(specPath(version))]));
  const common = {
    store: deps.store,
    logger,
    secret,
    feed,
    admission,
    service,
    onViolation: (operationId: string, version: ApiVersion) => metrics.violation(operationId, version),
    onDeprecatedCall: (operationId: string, version: ApiVersion) => metrics.deprecatedCall(operationId, version),
    onKeyRefused: (reason: AuthRefusalReason) => metrics.authRefusal(reason),
    onPlacement: (outcome: string) => metrics.placement(outcome),
  };
  const dispatcherOf = <V extends ApiVersion>(version: V, document: OpenAPIV3.Document): Promise<Dispatch> => {
    const { modules, handlers } = given(version);
    return createDispatcher({ ...common, version, document, definitions: { ...HANDLERS[version], ...modules }, overrides: handlers });
  };
  const dispatchers = new Map<string, Dispatch>();
  for (const [version, document] of documents) dispatchers.set(`/${version}/`, await dispatcherOf(version, document));
  // A path under no version's prefix is v1's to answer (its 404): v1's base address is the oldest promise.
  const fallback = dispatchers.get('/v1/');
  if (fallback === undefined) throw new Error('v1 is not served');
  // Each request's reads may share a read transaction with the others this turn answers (Store.readTogether).
  const dispatch: Dispatch = (request, res) =>
    deps.store.readTogether(() => (dispatchers.get(prefixOf(request.path)) ?? fallback)(request, res));
  const pipeline = createPipeline({
    logger,
    metrics,
    maxBodyBytes: deps.maxBodyBytes ?? DEFAULT_LIMITS.maxBodyBytes,
    dispatch,
    isEndpoint,
    cors: createCors(service.corsOrigins),
  });
  const served = new Map(
    [...documents].map(([version, document]) => [`/${version}/openapi.json`, Buffer.from(JSON.stringify(document), 'utf8')]),
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
  app.use(docsRouter([...documents].reverse()));

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
  // The server's listener gives the contract's requests to the pipeline without the router.
  serveDirectly(app, pipeline.direct);
  return app;
}
