import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createApp } from '../../src/app';
import { serveDirectly, withAppPrototypes } from '../../src/http/app-prototypes';
import { createHttpServer } from '../../src/server';
import { addKey, freshStore, order } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';

// The server's listener gives the contract's requests to the pipeline without express's router
// (serveDirectly, src/http/app-prototypes.ts). That is right only while the router adds nothing to
// them, so the app must answer each the same, byte for byte, through the router (the app as express
// runs it) and directly. A release of express whose router changed what a request gets fails here.

type Handle = (req: http.IncomingMessage, res: http.ServerResponse) => void;

async function listening(server: http.Server): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('serveDirectly', () => {
  test("the requests it serves skip the router with express's request and response; the others go through it", async () => {
    const app = express();
    const routed: string[] = [];
    app.use((req, res) => {
      routed.push(req.path);
      res.status(200).json({ routed: req.path });
    });
    serveDirectly(app, {
      serves: (req) => req.path.startsWith('/api/'),
      // express's getters work here (the request has the app's prototypes); not the helpers that need
      // what the router sets on each request, such as res.json's req.res.
      answer: (req, res) =>
        res.writeHead(202, { 'Content-Type': 'application/json' }).end(JSON.stringify({ direct: req.path, host: req.get('host') })),
    });
    const prototyped = withAppPrototypes(app);
    const server = await listening(
      http.createServer({ IncomingMessage: prototyped.IncomingMessage, ServerResponse: prototyped.ServerResponse }, prototyped.listener),
    );
    try {
      const direct = await fetch(`${server.url}/api/x?y=1`);
      const other = await fetch(`${server.url}/other`);

      expect(direct.status).toBe(202);
      expect(await direct.json()).toEqual({ direct: '/api/x', host: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
      expect(other.status).toBe(200);
      expect(await other.json()).toEqual({ routed: '/other' });
      expect(routed).toEqual(['/other']);
    } finally {
      await server.close();
    }
  });
});

describe("the app's answers, through express's router and directly", () => {
  const tmp = tempDir();
  afterAll(tmp.cleanup);

  test('are the same, head and body, and only the infrastructure endpoints reach the router', async () => {
    const { store } = freshStore(tmp.dir);
    const key = await addKey(store);
    await store.importOrders([order({ id: 1 }), order({ id: 2, petId: 11 })]);
    const app = await createApp({ store });
    const handle = jest.spyOn(app as unknown as { handle: Handle }, 'handle');
    const direct = await listening(createHttpServer(app));
    // The app as express runs it: every request through its router.
    const routed = await listening(http.createServer(app));
    const auth = { Authorization: `Bearer ${key}` };
    const json = { ...auth, 'Content-Type': 'application/json' };
    const requests: Array<{ method: string; path: string; headers?: Record<string, string>; body?: string }> = [
      { method: 'GET', path: '/v2/store/orders/1', headers: auth },
      { method: 'HEAD', path: '/v2/store/orders/1', headers: auth },
      { method: 'GET', path: '/v2/store/orders/999', headers: auth },
      { method: 'GET', path: '/v2/store/orders/abc', headers: auth },
      { method: 'GET', path: '/v2/store/orders?limit=1', headers: auth },
      { method: 'GET', path: '/v1/store/orders', headers: auth },
      { method: 'GET', path: '/v1/store/orders' },
      { method: 'GET', path: '/v1/store/orders', headers: { Authorization: 'Bearer pso_wrong' } },
      { method: 'PUT', path: '/v2/store/orders/1', headers: auth },
      { method: 'OPTIONS', path: '/v2/store/orders/1', headers: auth },
      { method: 'GET', path: '/v2/no/such/operation', headers: auth },
      { method: 'GET', path: '/nowhere' },
      { method: 'GET', path: '/v2/store/%zz', headers: auth },
      { method: 'POST', path: '/v3/store/orders', headers: { ...json, 'Idempotency-Key': 'same' }, body: '{}' },
      { method: 'POST', path: '/v3/store/orders', headers: { ...json, 'Idempotency-Key': 'same' }, body: '{"petId":' },
      { method: 'POST', path: '/v3/store/orders', headers: { ...json, 'Idempotency-Key': 'same' }, body: 'x'.repeat(2 * 1024 * 1024) },
      { method: 'GET', path: '/healthz' },
    ];
    const answer = async (url: string, { method, path, headers, body }: (typeof requests)[number], n: number) => {
      const res = await fetch(`${url}${path}`, { method, headers: { ...headers, 'X-Request-Id': `same-${n}` }, body });
      return {
        request: `${method} ${path.slice(0, 40)}`,
        status: res.status,
        headers: [...res.headers].filter(([name]) => name !== 'date'),
        body: await res.text(),
      };
    };
    try {
      for (const [n, one] of requests.entries()) {
        const before = handle.mock.calls.length;
        const viaRouter = await answer(routed.url, one, n);
        const routerCalls = handle.mock.calls.length - before;
        const directly = await answer(direct.url, one, n);

        expect(directly).toEqual(viaRouter);
        expect(routerCalls).toBe(1);
        // Only /healthz, an infrastructure endpoint, reaches the router when served directly.
        expect(handle.mock.calls.length - before - routerCalls).toBe(one.path === '/healthz' ? 1 : 0);
      }
    } finally {
      await direct.close();
      await routed.close();
      await store.close();
    }
  });
});
