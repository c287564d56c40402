// fastify 5 on PostgreSQL, with the same key-hash auth as petstore-orders: v2's read of one order
// (the key by its hash, then the order: the same two queries), and a placement, its body validated
// against v3's NewOrder, the same insert as a placement (the order under the next id, its event and
// the revision, in one transaction), without an Idempotency-Key. Each statement with values is
// prepared under a name, as petstore-orders prepares its own, so both ask the same of the database.
import Fastify from 'fastify';
import pg from 'pg';
import { instantKey } from '../../../src/date-time';
import {
  UNAUTHORIZED,
  bearerHash,
  notFound,
  orderEtag,
  ready,
  specSchemas,
  v2OrderSchema,
  withoutExamples,
  type BaselineNewOrder,
} from './shared';

const at = (flag: string) => process.argv[process.argv.indexOf(flag) + 1]!;
const pool = new pg.Pool({ connectionString: at('--url'), max: 10 });
const port = Number(at('--port'));
const error = specSchemas('openapi.yaml').Error;
const app = Fastify({ logger: false });

/** Whether the request's bearer key is an active key's. */
async function authorized(header: string | undefined): Promise<boolean> {
  const hash = bearerHash(header);
  if (hash === undefined) return false;
  const key = await pool.query({
    name: 'key',
    text: 'SELECT name FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
    values: [hash],
  });
  return key.rowCount === 1;
}

app.get('/healthz', async () => ({ status: 'ok' }));
app.get<{ Params: { orderId: string } }>(
  '/v2/store/orders/:orderId',
  { schema: { response: { 200: v2OrderSchema(), 401: error, 404: error } } },
  async (req, reply) => {
    if (!(await authorized(req.headers.authorization))) return reply.code(401).header('WWW-Authenticate', 'Bearer').send(UNAUTHORIZED);
    const id = Number(req.params.orderId);
    const found = await pool.query<{ id: string; pet_id: string; quantity: string; ship_date: string; complete: boolean; status: string }>({
      name: 'order',
      text: `SELECT id, pet_id, quantity, ship_date, complete, status FROM orders WHERE id = $1 AND status <> 'cancelled'`,
      values: [id],
    });
    const row = found.rows[0];
    if (row === undefined) return reply.code(404).send(notFound(id));
    const order = {
      id: Number(row.id),
      petId: Number(row.pet_id),
      quantity: Number(row.quantity),
      shipDate: row.ship_date,
      complete: row.complete,
      status: row.status,
    };
    return reply.header('ETag', orderEtag(order)).send(order);
  },
);
app.post<{ Body: BaselineNewOrder }>(
  '/v3/store/orders',
  { schema: { body: withoutExamples(specSchemas('openapi-v3.yaml').NewOrder!) } },
  async (req, reply) => {
    if (!(await authorized(req.headers.authorization))) return reply.code(401).header('WWW-Authenticate', 'Bearer').send(UNAUTHORIZED);
    const { petId, quantity, shipDate } = req.body;
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('UPDATE store_meta SET revision = revision + 1');
      const next = await client.query<{ id: string }>('SELECT coalesce(max(id), 0) + 1 AS id FROM orders');
      const id = Number(next.rows[0]!.id);
      const now = new Date().toISOString();
      await client.query({
        name: 'insert order',
        text: `INSERT INTO orders (id, pet_id, quantity, ship_date, ship_at, created_at, complete, status) VALUES ($1, $2, $3, $4, $5, $6, false, 'pending')`,
        values: [id, petId, quantity, shipDate, instantKey(shipDate), now],
      });
      await client.query({
        name: 'insert event',
        text: `INSERT INTO order_events (type, order_id, status, occurred_at) VALUES ('order.created', $1, 'pending', $2)`,
        values: [id, now],
      });
      await client.query('COMMIT');
      return reply
        .code(201)
        .header('Location', `/v3/store/orders/${id}`)
        .send({ id, petId, quantity, shipDate, complete: false, status: 'pending' });
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  },
);

void app.listen({ port, host: '127.0.0.1' }).then(() => ready(port));
