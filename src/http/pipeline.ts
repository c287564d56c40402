import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiError } from '../errors';
import { requestLog, type Logger } from '../logger';
import type { Metrics } from '../metrics';
import type { CorsStep } from './cors';
import type { Dispatch } from './dispatcher';
import { thrownReply } from './error-reply';
import { sendReply, setCommonHeaders } from './reply';
import { requestContext, startRequestContext, type RequestContext } from './request-context';

/**
 * The request pipeline. Every request goes through these steps, in this order:
 *
 *   1. identify       its request id and typed context (request-context.ts), which every later step
 *                     reads and adds to; its headers (the id and the common ones) go out with the
 *                     response's head (reply.ts)
 *   2. record         once the response is over (sent, or abandoned): one log line and the metrics
 *      cors           only where the deployment allows origins: a preflight answered, an allowed
 *                     page's request given its headers (cors.ts)
 *   3. limit          a body over the limit is a 413; one within it is read whole before routing
 *   4. route          an infrastructure endpoint (express's routes, in app.ts), or the contract
 *
 * and, for the contract, the dispatcher (dispatcher.ts): match, then the steps it lists (read body,
 * authenticate, authorize, validate, admit, handle, each in steps/), then check and write.
 *
 * Anything thrown on the way becomes an Error reply in one place, error-reply.ts, which the
 * server's client errors (server.ts) share.
 */
export interface PipelineOptions {
  logger: Logger;
  metrics: Metrics;
  /** Largest request body accepted, in bytes. */
  maxBodyBytes: number;
  /** The contract's dispatcher: mounted here, once. */
  dispatch: Dispatch;
  /** Whether a path belongs to an infrastructure endpoint rather than the contract. */
  isEndpoint: (path: string) => boolean;
  /** The CORS step, when the deployment allows some origins. */
  cors?: CorsStep | undefined;
}

/**
 * The pipeline's three express handlers (its entry, what answers a path no endpoint serves, and the
 * error renderer), and the contract's requests answered without express's router (`direct`).
 */
export interface Pipeline {
  readonly entry: RequestHandler;
  readonly unrouted: RequestHandler;
  readonly renderThrown: ErrorRequestHandler;
  /**
   * For the server's listener (app-prototypes.ts): whether a request is the contract's (not an
   * infrastructure endpoint's), and the pipeline run on it as the app would run it, entry first
   * and anything thrown or rejected rendered by renderThrown, without the router in between.
   */
  readonly direct: DirectRoute;
}

/** Requests the pipeline answers without express's router, and how. */
export interface DirectRoute {
  readonly serves: (req: Request) => boolean;
  readonly answer: (req: Request, res: Response) => void;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the pipeline's steps around a dispatcher. */
export function createPipeline(options: PipelineOptions): Pipeline {
  const { logger, metrics, maxBodyBytes, dispatch, isEndpoint, cors } = options;

  // 1. identify
  const identify = (req: IncomingMessage): RequestContext => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    // Its headers go out with the response's head (sendReply), or are set before an endpoint answers.
    return startRequestContext(req, requestId);
  };

  // 2. record: never the headers, so never a key.
  const logRequest = requestLog(logger);
  const record = (req: Request, res: Response, context: RequestContext): void => {
    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - context.started) / 1e9;
      const operation = context.handledBy ?? 'none';
      metrics.observe(operation, req.method, res.statusCode, seconds, context.version);
      logRequest({
        requestId: context.id,
        method: req.method,
        path: req.path,
        apiVersion: context.version,
        operationId: operation,
        status: res.statusCode,
        durationMs: Math.round(seconds * 1e6) / 1e3,
        aborted: res.writableFinished ? undefined : true,
      });
    });
  };

  // 4. route
  const route = (req: Request, res: Response, next: NextFunction, context: RequestContext, body?: Buffer): Promise<void> | void => {
    const rawPath = req.path;
    if (isEndpoint(rawPath)) {
      setCommonHeaders(res, context.id);
      return next();
    }
    if (!decodable(rawPath)) throw new ApiError('invalid_request', 'The request path contains malformed percent-encoding');
    // The pipeline runs at the app's root, where express's originalUrl is the request's url.
    const queryIndex = req.url.indexOf('?');
    return dispatch(
      {
        method: req.method,
        path: rawPath,
        query: queryIndex === -1 ? '' : req.url.slice(queryIndex + 1),
        headers: req.headers,
        context,
        body,
      },
      res,
    );
  };

  const entry: RequestHandler = (req, res, next) => {
    const context = identify(req);
    record(req, res, context);
    if (cors === undefined) return limit(req, res, next, context);
    // What the rest throws or rejects goes to the error renderer, as it would from entry.
    cors(req, res, context, () => caught(() => limit(req, res, next, context), next));
  };

  // 3. limit
  const limit = (req: Request, res: Response, next: NextFunction, context: RequestContext): Promise<void> | void => {
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > maxBodyBytes) throw bodyTooLarge(maxBodyBytes);
    if ((declared === undefined || declared === '0') && req.headers['transfer-encoding'] === undefined) {
      return route(req, res, next, context);
    }
    return readBody(req, maxBodyBytes).then((outcome) => {
      if (outcome === 'too_large') throw bodyTooLarge(maxBodyBytes);
      if (outcome !== 'aborted') return route(req, res, next, context, outcome);
    });
  };

  const unrouted: RequestHandler = () => {
    throw new ApiError('not_found');
  };

  const renderThrown: ErrorRequestHandler = (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const context = requestContext(req);
    if (res.headersSent) {
      logger.error({ err, requestId: context.id }, 'request failed after its response began');
      res.destroy();
      return;
    }
    sendReply(res, thrownReply(err, logger, context), context.id);
  };

  const direct: DirectRoute = {
    serves: (req) => !isEndpoint(req.path),
    answer: (req, res) => {
      const fail = (err: unknown): void => {
        try {
          renderThrown(err, req, res, fail);
        } catch (failure) {
          logger.error({ err: failure }, 'an error reply could not be written');
          res.destroy();
        }
      };
      caught(() => entry(req, res, fail), fail);
    },
  };

  return { entry, unrouted, renderThrown, direct };
}

/** Runs `run`, and gives what it throws, or its promise rejects with, to `failed`. */
function caught(run: () => unknown, failed: (err: unknown) => void): void {
  try {
    const running = run();
    if (running instanceof Promise) running.catch(failed);
  } catch (err) {
    failed(err);
  }
}

/** The 413 for a body over the limit; the connection closes after it, with the rest of the body unread. */
function bodyTooLarge(limit: number): ApiError {
  return new ApiError('invalid_request', `The request body exceeds ${limit} bytes`, { Connection: 'close' }, 413);
}

/**
 * Reads a request body whole, so that a request is complete before it is answered: the body's
 * bytes, `too_large` as soon as it passes the limit, or `aborted` if the client went away first.
 */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too_large' | 'aborted'> {
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
  if (!rawPath.includes('%')) return true;
  try {
    decodeURIComponent(rawPath);
    return true;
  } catch {
    return false;
  }
}
