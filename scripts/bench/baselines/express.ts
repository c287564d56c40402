// Bare express 5: the same queries and auth, res.json, express's defaults.
import express from 'express';
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
const app = express();

app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
app.get('/v1/store/orders', (req, res) => {
  if (!store.authorized(req.headers.authorization)) {
    res.status(401).set('WWW-Authenticate', 'Bearer').json(UNAUTHORIZED);
    return;
  }
  res.json(store.listOrders());
});
app.get(['/v2/store/orders/:orderId', '/v3/store/orders/:orderId'], (req, res) => {
  if (!store.authorized(req.headers.authorization)) {
    res.status(401).set('WWW-Authenticate', 'Bearer').json(UNAUTHORIZED);
    return;
  }
  const id = Number(req.params.orderId);
  const found = store.getOrder(id);
  if (found === undefined) res.status(404).json(notFound(id));
  else res.set('ETag', found.etag).json(found.order);
});
app.delete('/v1/store/orders/:orderId', (req, res) => {
  if (!store.authorized(req.headers.authorization)) {
    res.status(401).set('WWW-Authenticate', 'Bearer').json(UNAUTHORIZED);
    return;
  }
  const id = Number(req.params.orderId);
  const outcome = store.cancelOrder(id);
  if (outcome === 'cancelled') res.status(204).end();
  else if (outcome === 'shipped') res.status(409).json(shipped(id));
  else res.status(404).json(notFound(id));
});

// A placement: express.json() reads the body, the same insert, 201 at the order's address.
app.post('/v3/store/orders', express.json(), (req, res) => {
  if (!store.authorized(req.headers.authorization)) {
    res.status(401).set('WWW-Authenticate', 'Bearer').json(UNAUTHORIZED);
    return;
  }
  const placed = store.placeOrder(req.body as BaselineNewOrder);
  res.status(201).set('Location', `/v3/store/orders/${placed.id}`).json(placed);
});

app.all('/v1/store/orders', (_req, res) => {
  res.status(405).set('Allow', 'GET, HEAD').json(METHOD_NOT_ALLOWED);
});
app.use((_req, res) => {
  res.status(404).json(NO_OPERATION);
});

app.listen(port, '127.0.0.1', () => ready(port));
