// fastify 5 on PostgreSQL, for the placement rows: the body validated against v3's NewOrder, the
// same key-hash auth and the same insert as a placement (the order under the next id, its event and
// the revision, in one transaction), without an Idempotency-Key.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Fastify from 'fastify';
import pg from 'pg';
import { parse } from 'yaml';
import { instantKey } from '../../../src/date-time';
import { UNAUTHORIZED, ready, withoutExamples, type BaselineNewOrder } from './shared';

const at = (flag: string) => process.argv[process.argv.indexOf(flag) + 1]!;
const pool = new pg.Pool({ connectionString: at('--url'), max: 10 });
const port = Number(at('--port'));
const spec = parse(fs.readFileSync(path.join(__dirname, '../../../../spec/openapi-v3.yaml'), 'utf8')) as {
  components: { schemas: Record<string, object> };
};
const app = Fastify({ logger: false });

app.get('/healthz', async () => ({ status: 'ok' }));
app.post<{ Body: BaselineNewOrder }>(
  '/v3/store/orders',
  { schema: { body: withoutExamples(spec.components.schemas.NewOrder!) } },
  async (req, reply) => {
    const match = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? '');
    const hash = match === null ? '' : createHash('sha256').update(match[1]!).digest('hex');
    const key = await pool.query('SELECT name FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL', [hash]);
    if (key.rowCount !== 1) return reply.code(401).header('WWW-Authenticate', 'Bearer').send(UNAUTHORIZED);
    const { petId, quantity, shipDate } = req.body;
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('UPDATE store_meta SET revision = revision + 1');
      const next = await client.query<{ id: string }>('SELECT coalesce(max(id), 0) + 1 AS id FROM orders');
      const id = Number(next.rows[0]!.id);
      const now = new Date().toISOString();
      await client.query(
        `INSERT INTO orders (id, pet_id, quantity, ship_date, ship_at, created_at, complete, status) VALUES ($1, $2, $3, $4, $5, $6, false, 'pending')`,
        [id, petId, quantity, shipDate, instantKey(shipDate), now],
      );
      await client.query(`INSERT INTO order_events (type, order_id, status, occurred_at) VALUES ('order.created', $1, 'pending', $2)`, [
        id,
        now,
      ]);
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
