import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { withAppPrototypes } from '../../src/http/app-prototypes';

// The seam that spares express its per-request Object.setPrototypeOf: it must leave the app as it
// was, and express must find nothing to change.
describe('withAppPrototypes', () => {
  test('it leaves the app it is given unchanged', () => {
    const app = express();
    const { request, response } = app;

    withAppPrototypes(app);

    expect(app.request).toBe(request);
    expect(app.response).toBe(response);
  });

  test("requests reach the app's handlers with the new prototypes unchanged, and express's own methods work", async () => {
    const app = express();
    const prototyped = withAppPrototypes(app);
    const seen: Array<{ request: boolean; response: boolean; app: boolean }> = [];
    app.get('/a/:b', (req, res) => {
      seen.push({
        request: Object.getPrototypeOf(req) === prototyped.IncomingMessage.prototype,
        response: Object.getPrototypeOf(res) === prototyped.ServerResponse.prototype,
        app: req.app === app,
      });
      res.status(201).json({ b: req.params.b, host: req.get('host') });
    });
    const server = http.createServer(
      { IncomingMessage: prototyped.IncomingMessage, ServerResponse: prototyped.ServerResponse },
      prototyped.listener,
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;

    try {
      const res = await fetch(`http://127.0.0.1:${port}/a/x`);

      expect(res.status).toBe(201);
      expect(await res.json()).toEqual({ b: 'x', host: `127.0.0.1:${port}` });
      expect(seen).toEqual([{ request: true, response: true, app: true }]);
    } finally {
      server.close();
    }
  });
});
