import type { Express } from 'express';
import request from 'supertest';
import type { Store } from '../../src/store';

/** One v1 response, as bytes: its status, its headers but the two that differ on every run, and its body. */
export interface RecordedResponse {
  request: string;
  status: number;
  headers: Record<string, string>;
  /** The body's bytes, as UTF-8 text (every v1 body is JSON, or empty). */
  body: string;
}

/** Headers that differ between any two runs: the time, and the request id made for each request. */
const VARYING = new Set(['date', 'x-request-id']);

/**
 * The orders every recording starts from, and the store's list identity pinned, so that the
 * list's ETag is the same on every run.
 */
export async function seedV1Store(store: Store, pin: (sql: string) => Promise<void>): Promise<void> {
  await store.importOrders([
    { id: 1, petId: 10, quantity: 1, shipDate: '2026-12-01T09:30:00Z', complete: false },
    { id: 2, petId: 10, quantity: 2, shipDate: '2026-12-01T10:00:00.123+05:30', complete: true },
    { id: 3, petId: 20, quantity: 3, shipDate: '2026-11-20T15:00:00-08:00', complete: false, status: 'shipped' },
    { id: 9007199254740991, petId: -9007199254740991, quantity: 9007199254740991, shipDate: '2016-12-31T23:59:60Z', complete: true },
  ]);
  await pin("UPDATE store_meta SET store_id = '0123456789abcdef', revision = 7");
}

/**
 * Sends v1 the same requests, in the same order, and records every response byte for byte: lists
 * (plain, HEAD, conditional, with undeclared parameters), cancels (204, 404, 409, 400), the
 * deprecated pets operation, the refusals (401, 404, 405, 400), and the served document.
 */
export async function recordV1(app: Express, key: string): Promise<RecordedResponse[]> {
  const auth = { Authorization: `Bearer ${key}` };
  const steps: Array<[string, () => request.Test]> = [
    ['GET list', () => request(app).get('/v1/store/orders').set(auth)],
    ['HEAD list', () => request(app).head('/v1/store/orders').set(auth)],
    [
      'GET list, If-None-Match',
      () =>
        request(app)
          .get('/v1/store/orders')
          .set({ ...auth, 'If-None-Match': 'W/"0123456789abcdef-7"' }),
    ],
    ['GET list, undeclared query', () => request(app).get('/v1/store/orders?status=pending&limit=1&cursor=x').set(auth)],
    [
      'GET list, gzip',
      () =>
        request(app)
          .get('/v1/store/orders')
          .set({ ...auth, 'Accept-Encoding': 'gzip' }),
    ],
    ['DELETE pending', () => request(app).delete('/v1/store/orders/2').set(auth)],
    ['DELETE again', () => request(app).delete('/v1/store/orders/2').set(auth)],
    ['DELETE shipped', () => request(app).delete('/v1/store/orders/3').set(auth)],
    ['DELETE leading zero', () => request(app).delete('/v1/store/orders/05').set(auth)],
    ['DELETE beyond safe', () => request(app).delete('/v1/store/orders/9007199254740993').set(auth)],
    ['DELETE unknown, undeclared query', () => request(app).delete('/v1/store/orders/404?force=true').set(auth)],
    ['GET list after cancel', () => request(app).get('/v1/store/orders').set(auth)],
    ['GET pet', () => request(app).get('/v1/pets/10').set(auth)],
    ['GET unknown pet', () => request(app).get('/v1/pets/999').set(auth)],
    ['GET list, no key', () => request(app).get('/v1/store/orders')],
    ['GET list, wrong key', () => request(app).get('/v1/store/orders').set({ Authorization: 'Bearer pso_wrong' })],
    ['PUT list', () => request(app).put('/v1/store/orders').set(auth)],
    ['GET unknown path', () => request(app).get('/v1/store/ordersx').set(auth)],
    ['GET malformed path', () => request(app).get('/v1/store/orders/%zz').set(auth)],
    ['GET document', () => request(app).get('/v1/openapi.json')],
  ];
  const recorded: RecordedResponse[] = [];
  for (const [name, send] of steps) {
    const res = await send()
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      });
    const headers = Object.fromEntries(
      Object.entries(res.headers as Record<string, string>)
        .filter(([header]) => !VARYING.has(header))
        .sort(([a], [b]) => a.localeCompare(b)),
    );
    const body = Buffer.isBuffer(res.body) ? res.body.toString('utf8') : '';
    recorded.push({ request: name, status: res.status, headers, body });
  }
  return recorded;
}
