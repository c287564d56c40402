import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from 'cors';
import { setCommonHeaders } from './reply';
import type { RequestContext } from './request-context';

/** The methods the contract's operations take, for a preflight's `Access-Control-Allow-Methods`. */
const METHODS = ['GET', 'HEAD', 'POST', 'DELETE'];
/** The request headers a page may send: the key, a conditional read's tag, a placement's key, a body's type, a request id. */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'If-None-Match', 'Idempotency-Key', 'X-Request-Id'];
/** The response headers a page may read, besides the ones every browser shows. */
const EXPOSED_HEADERS = [
  'ETag',
  'Link',
  'Location',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'WWW-Authenticate',
  'Deprecation',
  'Sunset',
  'X-Request-Id',
];
/** How long a browser may keep a preflight's answer, in seconds. */
const MAX_AGE = 600;

/** The CORS step: whether it answered the request (a preflight), or the request goes on. */
export type CorsStep = (req: IncomingMessage, res: ServerResponse, context: RequestContext, next: () => void) => void;

/**
 * The CORS step of the pipeline, for the origins the deployment allows (PETSTORE_CORS_ORIGINS), by
 * the `cors` package: a request whose `Origin` is allowed gets `Access-Control-Allow-Origin` with
 * that origin (and `Vary: Origin`), and its preflight is answered here with 204, the methods, the
 * headers and a max age. A request without an allowed origin goes on untouched, so the contract
 * answers it as it would without CORS (an `OPTIONS` is then its 405). Undefined when no origin is
 * allowed: the step is not in the pipeline at all.
 */
export function createCors(origins: readonly string[]): CorsStep | undefined {
  if (origins.length === 0) return undefined;
  const allowed = new Set(origins);
  const middleware = cors({
    origin: [...origins],
    methods: METHODS,
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: MAX_AGE,
    optionsSuccessStatus: 204,
  });
  return (req, res, context, next) => {
    const { origin } = req.headers;
    if (origin === undefined || !allowed.has(origin)) return next();
    // A preflight is answered by the middleware itself: it carries the request's id like every response.
    if (req.method === 'OPTIONS') {
      context.handledBy = 'cors-preflight';
      setCommonHeaders(res, context.id);
    }
    // With a fixed list of origins the middleware never fails: it ends a preflight, or calls on.
    middleware(req, res, () => next());
  };
}
