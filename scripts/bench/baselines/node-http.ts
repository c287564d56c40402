// Bare node:http: the same queries and auth, the whole array built and stringified at once.
import http from 'node:http';
import {
  METHOD_NOT_ALLOWED,
  NO_OPERATION,
  UNAUTHORIZED,
  args,
  notFound,
  openBaselineStore,
  ready,
  shipped,
  type BaselineNewOrder,
} from './shared';

const { db, port } = args();
const store = openBaselineStore(db);

function json(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) });
  res.end(payload);
}

http
  .createServer((req, res) => {
    const url = req.url ?? '/';
    if (req.method === 'GET' && url === '/healthz') return json(res, 200, { status: 'ok' });
    if (req.method === 'POST' && url === '/v3/store/orders') {
      // A placement: the body read whole and parsed, the same insert, 201 at the order's address.
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (!store.authorized(req.headers.authorization)) return json(res, 401, UNAUTHORIZED, { 'WWW-Authenticate': 'Bearer' });
        const placed = store.placeOrder(JSON.parse(Buffer.concat(chunks).toString('utf8')) as BaselineNewOrder);
        json(res, 201, placed, { Location: `/v3/store/orders/${placed.id}` });
      });
      return;
    }
    const cancel = /^\/v1\/store\/orders\/(-?\d+)$/.exec(url);
    const read = req.method === 'GET' ? /^\/v[23]\/store\/orders\/(-?\d+)$/.exec(url) : null;
    const list = url === '/v1/store/orders';
    if (list && req.method !== 'GET') return json(res, 405, METHOD_NOT_ALLOWED, { Allow: 'GET, HEAD' });
    if (!((list && req.method === 'GET') || (cancel && req.method === 'DELETE') || read)) return json(res, 404, NO_OPERATION);
    if (!store.authorized(req.headers.authorization)) return json(res, 401, UNAUTHORIZED, { 'WWW-Authenticate': 'Bearer' });
    if (list) return json(res, 200, store.listOrders());
    if (read) {
      const found = store.getOrder(Number(read[1]));
      return found === undefined ? json(res, 404, notFound(Number(read[1]))) : json(res, 200, found.order, { ETag: found.etag });
    }
    const id = Number(cancel![1]);
    const outcome = store.cancelOrder(id);
    if (outcome === 'cancelled') {
      res.writeHead(204);
      res.end();
    } else if (outcome === 'shipped') json(res, 409, shipped(id));
    else json(res, 404, notFound(id));
  })
  .listen(port, '127.0.0.1', () => ready(port));
