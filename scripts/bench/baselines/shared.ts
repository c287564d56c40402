// What every baseline server shares with petstore-orders: the same SQLite settings, the same
// queries and the same key-hash auth, with none of the contract machinery around them.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { parse } from 'yaml';
import { instantKey } from '../../../src/date-time';

export interface BaselineOrder {
  id: number;
  petId: number;
  quantity: number;
  shipDate: string;
  complete: boolean;
}

/** v2's order: v1's fields and the status. */
export interface BaselineV2Order extends BaselineOrder {
  status: string;
}

/** An order to place, as a client sends it. */
export interface BaselineNewOrder {
  petId: number;
  quantity: number;
  shipDate: string;
}

interface Row {
  id: number;
  pet_id: number;
  quantity: number;
  ship_date: string;
  complete: number;
}

/** The store as a hand-written server would have it. */
export function openBaselineStore(file: string) {
  const db = new Database(file, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  const list = db.prepare<[], Row>(`SELECT id, pet_id, quantity, ship_date, complete FROM orders WHERE status <> 'cancelled' ORDER BY id`);
  const findKey = db.prepare<[string], { name: string }>('SELECT name FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL');
  const cancel = db.prepare(`UPDATE orders SET status = 'cancelled', cancelled_at = ? WHERE id = ? AND status = 'pending'`);
  const bump = db.prepare('UPDATE store_meta SET revision = revision + 1');
  const status = db.prepare<[number], { status: string }>('SELECT status FROM orders WHERE id = ?');
  const one = db.prepare<[number], Row & { status: string }>(
    `SELECT id, pet_id, quantity, ship_date, complete, status FROM orders WHERE id = ? AND status <> 'cancelled'`,
  );
  const nextId = db.prepare<[], number>('SELECT coalesce(max(id), 0) + 1 FROM orders').pluck();
  const insertOrder = db.prepare(
    `INSERT INTO orders (id, pet_id, quantity, ship_date, ship_at, created_at, complete, status) VALUES (?, ?, ?, ?, ?, ?, 0, 'pending')`,
  );
  const insertEvent = db.prepare(
    `INSERT INTO order_events (type, order_id, status, occurred_at) VALUES ('order.created', ?, 'pending', ?)`,
  );
  // The same insert as a placement: the order under the next id, its event and the revision, in
  // one transaction; without an Idempotency-Key, which a hand-written server would not have.
  const placeTx = db.transaction(({ petId, quantity, shipDate }: BaselineNewOrder): BaselineV2Order => {
    const id = nextId.get()!;
    const at = new Date().toISOString();
    insertOrder.run(id, petId, quantity, shipDate, instantKey(shipDate), at);
    insertEvent.run(id, at);
    bump.run();
    return { id, petId, quantity, shipDate, complete: false, status: 'pending' };
  });
  const cancelTx = db.transaction((id: number): 'cancelled' | 'shipped' | 'not_found' => {
    if (cancel.run(new Date().toISOString(), id).changes === 1) {
      bump.run();
      return 'cancelled';
    }
    return status.get(id)?.status === 'shipped' ? 'shipped' : 'not_found';
  });
  return {
    listOrders: (): BaselineOrder[] =>
      list.all().map((r) => ({ id: r.id, petId: r.pet_id, quantity: r.quantity, shipDate: r.ship_date, complete: r.complete === 1 })),
    cancelOrder: (id: number) => cancelTx.immediate(id),
    /** Places a new pending order, with its event. */
    placeOrder: (order: BaselineNewOrder): BaselineV2Order => placeTx.immediate(order),
    /** v2's read of one order and its weak ETag (a digest of the body), or undefined for an unknown or cancelled one. */
    getOrder: (id: number): { order: BaselineV2Order; etag: string } | undefined => {
      const r = one.get(id);
      if (r === undefined) return undefined;
      const order = {
        id: r.id,
        petId: r.pet_id,
        quantity: r.quantity,
        shipDate: r.ship_date,
        complete: r.complete === 1,
        status: r.status,
      };
      return { order, etag: orderEtag(order) };
    },
    authorized: (header: string | undefined): boolean => {
      const hash = bearerHash(header);
      return hash !== undefined && findKey.get(hash) !== undefined;
    },
  };
}

export const UNAUTHORIZED = { code: 'unauthorized', message: 'A valid API key is required', status: 401 };

export function notFound(id: number) {
  return { code: 'order_not_found', message: `Order ${id} was not found`, status: 404 };
}

/** The answer to a path no operation serves. */
export const NO_OPERATION = { code: 'not_found', message: 'No operation exists at this path', status: 404 };

/** The answer to a method the path does not serve; sent with `Allow`. */
export const METHOD_NOT_ALLOWED = { code: 'method_not_allowed', message: 'This method is not allowed on this path', status: 405 };

export function shipped(id: number) {
  return { code: 'order_already_shipped', message: `Order ${id} has already shipped and cannot be cancelled`, status: 409 };
}

/** `--db FILE --port N` from argv. */
export function args(): { db: string; port: number } {
  const at = (flag: string) => process.argv[process.argv.indexOf(flag) + 1]!;
  return { db: at('--db'), port: Number(at('--port')) };
}

/** Tells the bench runner the server is ready. */
export function ready(port: number): void {
  process.stdout.write(`listening ${port}\n`);
}

/** A document's schema as fastify's validator takes it: without the `example`s its strict mode refuses. */
export function withoutExamples(schema: object): object {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) => (key === 'example' ? undefined : value)) as object;
}

/** The hash `api_keys.key_hash` holds for the bearer key of an Authorization header (SHA-256, hex), if it has one. */
export function bearerHash(header: string | undefined): string | undefined {
  const key = /^Bearer +(\S+)$/i.exec(header ?? '')?.[1];
  return key === undefined ? undefined : createHash('sha256').update(key).digest('hex');
}

/** v2's weak ETag of one order: a digest of its body. */
export function orderEtag(order: BaselineV2Order): string {
  return `W/"${createHash('sha256').update(JSON.stringify(order)).digest('base64url').slice(0, 22)}"`;
}

/** The schemas of a document of spec/ (`openapi-v2.yaml`). */
export function specSchemas(file: string): Record<string, object> {
  const spec = parse(fs.readFileSync(path.join(__dirname, '../../../../spec', file), 'utf8')) as {
    components: { schemas: Record<string, object> };
  };
  return spec.components.schemas;
}

/** v2's Order (v3's is the same), with the schemas it refers to inline, as fast-json-stringify takes it. */
export function v2OrderSchema(): object {
  const schemas = specSchemas('openapi-v2.yaml');
  const inline = (schema: unknown): unknown =>
    JSON.parse(JSON.stringify(schema), (_key, value: unknown) => {
      const ref = typeof value === 'object' && value !== null && '$ref' in value ? String(value.$ref) : undefined;
      return ref === undefined ? value : inline(schemas[ref.replace('#/components/schemas/', '')]);
    });
  return inline(schemas.Order) as object;
}
