// fastify 5 with response schemas, so it serializes with fast-json-stringify: the same queries and auth.
import Fastify from 'fastify';
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
  specSchemas,
  v2OrderSchema,
  withoutExamples,
} from './shared';

const { db, port } = args();
const store = openBaselineStore(db);
const schemas = specSchemas('openapi.yaml');
const order = schemas.Order;
const v2Order = v2OrderSchema();
const error = schemas.Error;
const app = Fastify({ logger: false });

app.get('/healthz', async () => ({ status: 'ok' }));
app.get('/v1/store/orders', { schema: { response: { 200: { type: 'array', items: order }, 401: error } } }, async (req, reply) => {
  if (!store.authorized(req.headers.authorization)) return reply.code(401).header('WWW-Authenticate', 'Bearer').send(UNAUTHORIZED);
  return store.listOrders();
});
// One order, as v2 and v3 read it (the same Order).
for (const version of ['v2', 'v3']) {
  app.get<{ Params: { orderId: string } }>(
    `/${version}/store/orders/:orderId`,
    { schema: { response: { 200: v2Order, 401: error, 404: error } } },
    async (req, reply) => {
      if (!store.authorized(req.headers.authorization)) return reply.code(401).header('WWW-Authenticate', 'Bearer').send(UNAUTHORIZED);
      const id = Number(req.params.orderId);
      const found = store.getOrder(id);
      if (found === undefined) return reply.code(404).send(notFound(id));
      return reply.header('ETag', found.etag).send(found.order);
    },
  );
}
app.delete<{ Params: { orderId: string } }>(
  '/v1/store/orders/:orderId',
  { schema: { response: { 401: error, 404: error, 409: error } } },
  async (req, reply) => {
    if (!store.authorized(req.headers.authorization)) return reply.code(401).header('WWW-Authenticate', 'Bearer').send(UNAUTHORIZED);
    const id = Number(req.params.orderId);
    const outcome = store.cancelOrder(id);
    if (outcome === 'cancelled') return reply.code(204).send();
    if (outcome === 'shipped') return reply.code(409).send(shipped(id));
    return reply.code(404).send(notFound(id));
  },
);

// A placement: the body validated against v3's NewOrder, the same insert, 201 at the order's address.
app.post<{ Body: BaselineNewOrder }>(
  '/v3/store/orders',
  { schema: { body: withoutExamples(specSchemas('openapi-v3.yaml').NewOrder!), response: { 201: v2Order, 401: error } } },
  async (req, reply) => {
    if (!store.authorized(req.headers.authorization)) return reply.code(401).header('WWW-Authenticate', 'Bearer').send(UNAUTHORIZED);
    const placed = store.placeOrder(req.body);
    return reply.code(201).header('Location', `/v3/store/orders/${placed.id}`).send(placed);
  },
);

app.route({
  method: ['PUT', 'POST', 'PATCH'],
  url: '/v1/store/orders',
  schema: { response: { 405: error } },
  handler: async (_req, reply) => reply.code(405).header('Allow', 'GET, HEAD').send(METHOD_NOT_ALLOWED),
});
app.setNotFoundHandler({}, async (_req, reply) => reply.code(404).send(NO_OPERATION));

void app.listen({ port, host: '127.0.0.1' }).then(() => ready(port));
