import http from 'node:http';
import type { Express } from 'express';

/** What Node's server needs to build requests and responses that already have the app's prototypes. */
export interface PrototypedApp {
  /** Runs the app on a request: express's own handling, unchanged. */
  readonly listener: http.RequestListener;
  /** The request class for `http.createServer`: an IncomingMessage whose prototype chain is the app's. */
  readonly IncomingMessage: typeof http.IncomingMessage;
  /** The response class for `http.createServer`: a ServerResponse whose prototype chain is the app's. */
  readonly ServerResponse: typeof http.ServerResponse<http.IncomingMessage>;
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
 * exactly; tests/http/app-prototypes.test.ts fails if a release stops doing so.
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
  return {
    listener: (req, res) => view.handle(req, res),
    IncomingMessage: AppRequest,
    ServerResponse: AppResponse,
  };
}
