import http from 'node:http';
import type { Express, Request, Response } from 'express';
import type { DirectRoute } from './pipeline';

/** What Node's server needs to build requests and responses that already have the app's prototypes. */
export interface PrototypedApp {
  /** Runs the app on a request: express's own handling, unchanged. */
  readonly listener: http.RequestListener;
  /** The request class for `http.createServer`: an IncomingMessage whose prototype chain is the app's. */
  readonly IncomingMessage: typeof http.IncomingMessage;
  /** The response class for `http.createServer`: a ServerResponse whose prototype chain is the app's. */
  readonly ServerResponse: typeof http.ServerResponse<http.IncomingMessage>;
}

/** The requests each app answers without its router, as serveDirectly registered them. */
const directRoutes = new WeakMap<Express, DirectRoute>();

/**
 * Registers requests that the server's listener (withAppPrototypes) gives `route` instead of the
 * app's router: the contract's, which the pipeline answers whole (pipeline.ts). express's router
 * costs every request it runs CPU and allocations (docs/performance-log.md has the figures), and on
 * these paths it adds nothing else: the pipeline is its first middleware and never calls the
 * next. `route` gets the request and response with the app's prototypes (express's getters, such
 * as `req.path`), but not what express's app sets on each one it runs (`req.res`, `res.locals`),
 * which only its response helpers (`res.json`) read; the pipeline writes with Node's own. The app
 * itself is unchanged: mounted elsewhere, or handed to a test's client, it runs every request
 * through the router as before, to the same answers (tests/http/direct-route.test.ts).
 */
export function serveDirectly(app: Express, route: DirectRoute): void {
  directRoutes.set(app, route);
}

/**
 * express gives every request and response the app's prototypes with Object.setPrototypeOf. Done
 * per request, that costs more than the rest of a small request together, because V8 has to leave
 * its fast paths for every object whose prototype changes (docs/performance.md, "Where the time
 * goes"). Built with the right prototype from the start, express's call changes nothing and costs nothing.
 *
 * `app` is left as it is: the listener runs express's `handle` on a view of the app whose `request`
 * and `response` are the new classes' prototypes (which inherit from the app's). This relies on
 * express 5's `app.handle` reading `this.request` and `this.response`, which is why express is pinned
 * exactly; tests/http/app-prototypes.test.ts fails if a release stops doing so. A request that
 * serveDirectly registered for the app goes to its route instead, on the same prototypes.
 */
export function withAppPrototypes(app: Express): PrototypedApp {
  class AppRequest extends http.IncomingMessage {}
  class AppResponse extends http.ServerResponse<http.IncomingMessage> {}
  Object.setPrototypeOf(AppRequest.prototype, app.request);
  Object.setPrototypeOf(AppResponse.prototype, app.response);
  // express's app.handle, which its typings leave out; calling the app itself would run it on `app`.
  const view = Object.create(app, {
    request: { value: AppRequest.prototype },
    response: { value: AppResponse.prototype },
  }) as { handle: http.RequestListener };
  const direct = directRoutes.get(app);
  return {
    listener:
      direct === undefined
        ? (req, res) => view.handle(req, res)
        : (req, res) => {
            // Made by the classes below, whose prototypes are the app's: express's request and response.
            const request = req as Request;
            const response = res as Response;
            if (direct.serves(request)) direct.answer(request, response);
            else view.handle(req, res);
          },
    IncomingMessage: AppRequest,
    ServerResponse: AppResponse,
  };
}
