import type { Express } from 'express';
import request from 'supertest';
import { createApp } from '../../../src/app';
import { instantKey } from '../../../src/date-time';
import { loadDocument, specPath } from '../../../src/contract/document';
import type { ImportRecord, OrderRecord } from '../../../src/store';
import { expectConforms } from '../../helpers/contract';
import { eachStore, order, recordsOf } from '../../helpers/stores';

type Query = Record<string, string | number | boolean>;
interface Page {
  orders: Array<OrderRecord & { status: 'pending' | 'shipped' }>;
  nextCursor: string | null;
}

/** A store's worth of orders that every filter cuts differently: pets, statuses, completion, ship dates with offsets. */
function seedOrders(count: number): ImportRecord[] {
  const offsets = ['Z', '+05:30', '-08:00', '+01', 'z'];
  return Array.from({ length: count }, (_, i) => ({
    id: i * 3 + 1,
    petId: (i % 4) + 1,
    quantity: 1 + (i % 3),
    shipDate: `2026-12-${String(1 + (i % 28)).padStart(2, '0')}T${String(i % 24).padStart(2, '0')}:00:00${i % 7 === 0 ? '.5' : ''}${offsets[i % offsets.length]}`,
    complete: i % 5 === 0,
    status: i % 3 === 0 ? 'shipped' : 'pending',
  }));
}

/** Walks every page of a query, following nextCursor, checking that Link names the same next page. */
async function walk(app: Express, auth: Record<string, string>, query: Query): Promise<{ ids: number[]; pages: number }> {
  const ids: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await request(app)
      .get('/v2/store/orders')
      .query(cursor === null ? query : { ...query, cursor })
      .set(auth);
    expect(res.status).toBe(200);
    const page = res.body as Page;
    pages += 1;
    ids.push(...page.orders.map((o) => o.id));
    cursor = page.nextCursor;
    if (cursor === null) expect(res.headers.link).toBeUndefined();
    else {
      const link = /^<([^>]+)>; rel="next"$/.exec(res.headers.link as string);
      const next = new URL(link![1]!, 'http://x');
      expect(next.pathname).toBe('/v2/store/orders');
      expect(Object.fromEntries(next.searchParams)).toEqual({
        ...Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])),
        cursor,
      });
    }
    expect(pages).toBeLessThan(1000);
  } while (cursor !== null);
  return { ids, pages };
}

const FILTERS = {
  status: [undefined, 'pending', 'shipped'],
  petId: [undefined, 3],
  complete: [undefined, true, false],
  ship: [
    {},
    { shipDateFrom: '2026-12-10T00:00:00+05:30' },
    { shipDateTo: '2026-12-20T12:00:00.5Z' },
    { shipDateFrom: '2026-12-05T00:00:00Z', shipDateTo: '2026-12-06T00:00:00-08:00' },
  ],
} as const;

/** Every combination of the filters, each a query. */
function everyCombination(): Query[] {
  const queries: Query[] = [];
  for (const status of FILTERS.status)
    for (const petId of FILTERS.petId)
      for (const complete of FILTERS.complete)
        for (const ship of FILTERS.ship) {
          const query: Query = { ...ship };
          if (status !== undefined) query.status = status;
          if (petId !== undefined) query.petId = petId;
          if (complete !== undefined) query.complete = complete;
          queries.push(query);
        }
  return queries;
}

/** What a query should list, computed the plain way from every order in the store. */
function matching(all: OrderRecord[], query: Query): number[] {
  return all
    .filter(
      (o) =>
        (query.status === undefined || o.status === query.status) &&
        (query.petId === undefined || o.petId === query.petId) &&
        (query.complete === undefined || o.complete === query.complete) &&
        (query.shipDateFrom === undefined || instantKey(o.shipDate) >= instantKey(String(query.shipDateFrom))) &&
        (query.shipDateTo === undefined || instantKey(o.shipDate) < instantKey(String(query.shipDateTo))),
    )
    .map((o) => o.id);
}

eachStore((s) => {
  const app = () => createApp({ store: s.store });

  test('walking every page of every filter combination returns exactly the matching orders, once each, in id order', async () => {
    await s.store.importOrders(seedOrders(90));
    for (const id of [4, 10, 31, 100]) await s.store.cancelOrder(id);
    const all = await recordsOf(s.store);
    const served = await app();
    const combinations = everyCombination();

    for (const query of combinations) {
      const { ids } = await walk(served, s.auth, { ...query, limit: 4 });
      expect({ query, ids }).toEqual({ query, ids: matching(all, query) });
    }
    // The filters really cut: some combinations match nothing, and none matches everything but the unfiltered one.
    expect(combinations.filter((query) => matching(all, query).length === 0).length).toBeGreaterThan(0);
    expect(combinations.filter((query) => matching(all, query).length > 10).length).toBeGreaterThan(10);
  });

  test('a page is the v2 Order with its status, conformant, and the default limit is 100', async () => {
    await s.store.importOrders([
      ...Array.from({ length: 101 }, (_, i) => order({ id: i + 1 })),
      { ...order({ id: 500 }), status: 'shipped' },
    ]);
    const served = await app();

    const first = await request(served).get('/v2/store/orders').set(s.auth);
    const shipped = await request(served).get('/v2/store/orders').query({ status: 'shipped' }).set(s.auth);

    expect(first.status).toBe(200);
    expect((first.body as Page).orders).toHaveLength(100);
    expect((first.body as Page).orders[0]).toEqual({
      id: 1,
      petId: 10,
      quantity: 1,
      shipDate: '2026-12-01T10:00:00Z',
      complete: false,
      status: 'pending',
    });
    expect((first.body as Page).nextCursor).toEqual(expect.any(String));
    await expectConforms(first, 'listOrders', 'v2');
    expect(shipped.body).toEqual({
      orders: [{ id: 500, petId: 10, quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false, status: 'shipped' }],
      nextCursor: null,
    });
    await expectConforms(shipped, 'listOrders', 'v2');
  });

  test('pages stay exact while a writer cancels and imports between them', async () => {
    await s.store.importOrders(Array.from({ length: 40 }, (_, i) => order({ id: (i + 1) * 10 })));
    const served = await app();
    const seen: number[] = [];
    const cancelled = new Set<number>();
    const cancelledAhead = new Set<number>();
    let cursor: string | null = null;
    let page = 0;
    do {
      const res = await request(served)
        .get('/v2/store/orders')
        .query({ status: 'pending', limit: 5, ...(cursor === null ? {} : { cursor }) })
        .set(s.auth);
      const body = res.body as Page;
      seen.push(...body.orders.map((o) => o.id));
      cursor = body.nextCursor;
      page += 1;
      // Meanwhile: cancel one order already read and one not yet read, and import orders behind and ahead of the cursor.
      const last = seen.at(-1)!;
      if ((await s.store.cancelOrder(last - 20)) === 'cancelled') cancelled.add(last - 20);
      if ((await s.store.cancelOrder(last + 20)) === 'cancelled') cancelledAhead.add(last + 20);
      await s.store.importOrders([...(last < 400 ? [order({ id: last - 5 })] : []), order({ id: 5000 + page })]);
    } while (cursor !== null);

    // Each order at most once, in id order; every order pending throughout was read; none cancelled
    // before its page was read; the orders imported ahead of the cursor were read, those behind not.
    expect(seen).toEqual([...new Set(seen)].sort((a, b) => a - b));
    const throughout = Array.from({ length: 40 }, (_, i) => (i + 1) * 10).filter((id) => !cancelled.has(id) && !cancelledAhead.has(id));
    expect(seen).toEqual(expect.arrayContaining(throughout));
    expect(cancelledAhead.size).toBeGreaterThan(0);
    expect(seen.filter((id) => cancelledAhead.has(id))).toEqual([]);
    expect(seen.filter((id) => id > 5000)).toEqual(Array.from({ length: page - 1 }, (_, i) => 5001 + i));
    expect(seen.filter((id) => id < 5000 && id % 10 === 5)).toEqual([]);
  });

  describe('refusals: a 400 Error that names the parameter', () => {
    const firstCursor = async (served: Express, query: Query): Promise<string> => {
      const res = await request(served).get('/v2/store/orders').query(query).set(s.auth);
      return (res.body as Page).nextCursor!;
    };

    test.each([
      ['a cursor sent with another status', { status: 'shipped' }, /^cursor was issued for other filters/],
      ['a cursor sent with another limit', { limit: 3 }, /^cursor was issued for other filters/],
      ['a cursor sent without its filters', { limit: 2 }, /^cursor was issued for other filters/],
      ['a cursor sent with a ship date filter added', { shipDateFrom: '2026-01-01T00:00:00Z' }, /^cursor was issued for other filters/],
    ])('%s', async (_case, changed, message) => {
      await s.store.importOrders(Array.from({ length: 5 }, (_, i) => order({ id: i + 1 })));
      const served = await app();
      const cursor = await firstCursor(served, { status: 'pending', limit: 2 });
      const query = _case.includes('without') ? { limit: 2 } : { status: 'pending', limit: 2, ...changed };

      const res = await request(served)
        .get('/v2/store/orders')
        .query({ ...query, cursor })
        .set(s.auth);

      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', status: 400, message: expect.stringMatching(message) });
      await expectConforms(res, 'listOrders', 'v2');
    });

    test('the same filters spelled as the same instants are the same query', async () => {
      await s.store.importOrders(Array.from({ length: 5 }, (_, i) => order({ id: i + 1 })));
      const served = await app();
      const cursor = await firstCursor(served, { shipDateFrom: '2026-01-01T05:30:00+05:30', limit: 2 });

      const res = await request(served)
        .get('/v2/store/orders')
        .query({ shipDateFrom: '2026-01-01T00:00:00.000Z', limit: 2, cursor })
        .set(s.auth);

      expect(res.status).toBe(200);
      expect((res.body as Page).orders.map((o) => o.id)).toEqual([3, 4]);
    });

    test.each([
      [
        'tampered: its last id changed',
        (c: string) =>
          `${Buffer.from(JSON.stringify({ after: 0, query: JSON.parse(Buffer.from(c.split('.')[0]!, 'base64url').toString()).query })).toString('base64url')}.${c.split('.')[1]}`,
      ],
      ['tampered: one character of its signature changed', (c: string) => c.slice(0, -1) + (c.endsWith('A') ? 'B' : 'A')],
      ['truncated', (c: string) => c.slice(0, c.length - 5)],
      ['without its signature', (c: string) => c.split('.')[0]!],
      ['from another store', () => 'eyJhZnRlciI6MiwicXVlcnkiOiJ4In0.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ])('a cursor %s', async (_case, alter) => {
      await s.store.importOrders(Array.from({ length: 5 }, (_, i) => order({ id: i + 1 })));
      const served = await app();
      const cursor = await firstCursor(served, { limit: 2 });

      const res = await request(served)
        .get('/v2/store/orders')
        .query({ limit: 2, cursor: alter(cursor) })
        .set(s.auth);

      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/^cursor is not one this server issued/) });
      await expectConforms(res, 'listOrders', 'v2');
    });

    test.each([
      [{ limit: 0 }, /^limit must be >= 1/],
      [{ limit: 1001 }, /^limit must be <= 1000/],
      [{ limit: 'ten' }, /^limit must be the plain decimal form of an integer/],
      [{ status: 'cancelled' }, /^status must be one of "pending", "shipped"/],
      [{ petId: '07' }, /^petId must be the plain decimal form of an integer/],
      [{ complete: 'yes' }, /^complete must be true or false/],
      [{ shipDateFrom: '2026-02-30T00:00:00Z' }, /^shipDateFrom must match format "date-time"/],
      [{ cursor: 'a b' }, /^cursor must match pattern/],
      [
        { page: 2 },
        /^page is not a query parameter of this operation; it takes limit, cursor, status, petId, complete, shipDateFrom, shipDateTo$/,
      ],
    ])('%o', async (query, message) => {
      const res = await request(await app())
        .get('/v2/store/orders')
        .query(query as Query)
        .set(s.auth);

      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', status: 400, message: expect.stringMatching(message) });
      await expectConforms(res, 'listOrders', 'v2');
    });

    test('an undeclared query parameter on cancelOrder is a 400 too, and cancels nothing', async () => {
      await s.store.importOrders([order({ id: 1 })]);

      const res = await request(await app())
        .delete('/v2/store/orders/1')
        .query({ force: 'true' })
        .set(s.auth);

      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ message: 'force is not a query parameter of this operation; it takes none' });
      expect((await s.rows()).map((row) => row.status)).toEqual(['pending']);
    });
  });

  test('a cancel through either version removes the order from both versions’ lists', async () => {
    await s.store.importOrders([order({ id: 1 }), order({ id: 2 }), order({ id: 3 })]);
    const served = await app();

    const v2Cancel = await request(served).delete('/v2/store/orders/1').set(s.auth);
    const v1Cancel = await request(served).delete('/v1/store/orders/2').set(s.auth);
    const again = await request(served).delete('/v2/store/orders/2').set(s.auth);
    const v1List = await request(served).get('/v1/store/orders').set(s.auth);
    const v2List = await request(served).get('/v2/store/orders').set(s.auth);

    expect([v2Cancel.status, v1Cancel.status, again.status]).toEqual([204, 204, 404]);
    await expectConforms(v2Cancel, 'cancelOrder', 'v2');
    await expectConforms(again, 'cancelOrder', 'v2');
    expect((v1List.body as Array<{ id: number }>).map((o) => o.id)).toEqual([3]);
    expect((v2List.body as Page).orders.map((o) => o.id)).toEqual([3]);
  });

  test('v2 answers with the same keys, and has no pets operation', async () => {
    const served = await app();

    const unauthorized = await request(served).get('/v2/store/orders');
    const pets = await request(served).get('/v2/pets/1').set(s.auth);
    const document = await request(served).get('/v2/openapi.json');

    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers['www-authenticate']).toBe('Bearer realm="petstore-orders"');
    await expectConforms(unauthorized, 'listOrders', 'v2');
    expect(pets.status).toBe(404);
    expect(pets.body).toMatchObject({ code: 'not_found' });
    expect(document.status).toBe(200);
    expect(document.body).toEqual(loadDocument(specPath('v2')));
  });
});
