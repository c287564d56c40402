import { OrdersApiError, createOrdersClient, type OrdersClient } from '../../src/client';
import { DEFAULT_SCOPES, generateKey, hashKey } from '../../src/keys';
import { listen } from '../helpers/app';
import { eachStore, order, policies } from '../helpers/stores';
import { until } from '../helpers/wait';

eachStore((s) => {
  let server: Awaited<ReturnType<typeof listen>>;
  let client: OrdersClient;

  beforeEach(async () => {
    server = await listen({ store: s.store });
    client = createOrdersClient({ baseUrl: server.url, apiKey: s.key });
  });
  afterEach(() => server.close());

  test('a consumer lists orders, cancels one, and sees it gone, through the typed client', async () => {
    await s.store.importOrders([order({ id: 1, petId: 11 }), order({ id: 2, petId: 22 })]);

    const before = await client.listOrders();
    await client.cancelOrder(1);
    const after = await client.listOrders();

    expect(before.notModified).toBe(false);
    expect(before.notModified === false && before.orders.map((o) => o.petId)).toEqual([11, 22]);
    expect(after.notModified === false && after.orders.map((o) => o.id)).toEqual([2]);
  });

  test('a consumer revalidates the list with its ETag and is told it has not changed', async () => {
    await s.store.importOrders([order({ id: 1 })]);

    const first = await client.listOrders();
    const again = await client.listOrders({ ifNoneMatch: first.etag! });

    expect(first.etag).toMatch(/^W\/"/);
    expect(again).toEqual({ notModified: true, etag: first.etag });
  });

  test('a consumer gets the typed Error object when an order has shipped', async () => {
    await s.store.importOrders([order({ id: 3, status: 'shipped' })]);

    const failure = await client.cancelOrder(3).catch((err: unknown) => err);

    expect(failure).toBeInstanceOf(OrdersApiError);
    const error = failure as OrdersApiError;
    expect([error.status, error.code]).toEqual([409, 'order_already_shipped']);
    expect(error.body).toEqual({
      code: 'order_already_shipped',
      message: 'Order 3 has already shipped and cannot be cancelled',
      status: 409,
    });
  });

  test('a wrong key surfaces as a typed 401', async () => {
    const stranger = createOrdersClient({ baseUrl: `${server.url}/v1/`, apiKey: 'pso_not-a-key' });

    await expect(stranger.listOrders()).rejects.toMatchObject({ name: 'OrdersApiError', status: 401, code: 'unauthorized' });
  });

  test('a consumer reads a pet through the deprecated operation and sees its sunset', async () => {
    await s.store.importOrders([order({ id: 1, petId: 11 })]);

    const { pet, deprecation } = await client.getPetById(11);

    expect(pet).toEqual({ id: 11 });
    expect(deprecation.sunset).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
    expect(deprecation.deprecation).toMatch(/^@\d+$/);
  });
  describe('v2', () => {
    test('a consumer walks every pending order with the async iterator, a page at a time', async () => {
      await s.store.importOrders(Array.from({ length: 25 }, (_, i) => order({ id: i + 1, ...(i % 5 === 0 ? { status: 'shipped' } : {}) })));
      const pages: number[] = [];
      const counting: typeof fetch = async (input, init) => {
        pages.push(1);
        return fetch(input, init);
      };
      const counted = createOrdersClient({ baseUrl: `${server.url}/v2`, apiKey: s.key, fetch: counting });

      const ids: number[] = [];
      for await (const found of counted.v2.orders({ status: 'pending', limit: 6 })) ids.push(found.id);

      expect(ids).toEqual(Array.from({ length: 25 }, (_, i) => i + 1).filter((id) => (id - 1) % 5 !== 0));
      expect(pages).toHaveLength(4);
    });

    test('a page carries each order with its status, and stopping early reads no further page', async () => {
      await s.store.importOrders([order({ id: 1 }), order({ id: 2, status: 'shipped' }), order({ id: 3 })]);

      const page = await client.v2.listOrders({ limit: 2 });
      const next = await client.v2.listOrders({ limit: 2, cursor: page.nextCursor! });
      let requests = 0;
      const counted = createOrdersClient({ baseUrl: server.url, apiKey: s.key, fetch: (input, init) => (requests++, fetch(input, init)) });
      let first: unknown;
      for await (const found of counted.v2.orders({ limit: 1 })) {
        first = found;
        break;
      }

      expect(page.orders.map((o) => [o.id, o.status])).toEqual([
        [1, 'pending'],
        [2, 'shipped'],
      ]);
      expect(next).toEqual({ orders: [expect.objectContaining({ id: 3, status: 'pending' })], nextCursor: null });
      expect(first).toMatchObject({ id: 1 });
      expect(requests).toBe(1);
    });

    test('v2 reads one order, answers not modified for its ETag, and a cancelled one is the typed 404', async () => {
      await s.store.importOrders([order({ id: 1, petId: 7 }), order({ id: 2 })]);

      const read = await client.v2.getOrder(1);
      expect(read).toMatchObject({ notModified: false, order: { id: 1, petId: 7, status: 'pending' } });
      const etag = read.etag!;
      await expect(client.v2.getOrder(1, { ifNoneMatch: etag })).resolves.toEqual({ notModified: true, etag });
      await s.store.shipOrder(1);
      await expect(client.v2.getOrder(1, { ifNoneMatch: etag })).resolves.toMatchObject({
        notModified: false,
        order: { status: 'shipped' },
      });

      await client.v2.cancelOrder(2);
      await expect(client.v2.getOrder(2)).rejects.toMatchObject({ status: 404, code: 'order_not_found' });
    });

    test('v2 tails the change feed until its signal aborts, and resumes from its cursor after a network error', async () => {
      await s.store.importOrders([order({ id: 1 }), order({ id: 2 }), order({ id: 3 })]);
      let calls = 0;
      // The second read fails as a dropped connection would; the tail reads again from its cursor.
      const flaky = createOrdersClient({
        baseUrl: server.url,
        apiKey: s.key,
        fetch: async (input) => {
          calls += 1;
          if (calls === 2) throw new TypeError('fetch failed');
          return fetch(input);
        },
      });
      const stop = new AbortController();
      const tail = flaky.v2.events({ wait: 5, limit: 2, signal: stop.signal });
      const seen: string[] = [];
      for await (const event of tail) {
        seen.push(`${event.type} ${event.orderId}`);
        if (seen.length === 3) await client.v2.cancelOrder(2);
        if (seen.length === 4) stop.abort();
      }

      expect(seen).toEqual(['order.created 1', 'order.created 2', 'order.created 3', 'order.cancelled 2']);
      expect(calls).toBeGreaterThanOrEqual(4);
      // Its cursor resumes after what it took: a later change, and nothing before it.
      await s.store.shipOrder(1);
      const resumed = await client.v2.listOrderEvents({ after: tail.cursor!, wait: 5 });
      expect(resumed.events.map((e) => `${e.type} ${e.orderId}`)).toEqual(['order.shipped 1']);
      // A cursor the server refuses ends a tail with the typed error.
      const refused = client.v2.events({ after: 'x.y' });
      await expect(refused[Symbol.asyncIterator]().next()).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
    });

    test('v2 cancels, and refusals surface as the typed Error', async () => {
      await s.store.importOrders([order({ id: 1 }), order({ id: 2, status: 'shipped' })]);

      await client.v2.cancelOrder(1);

      await expect(client.v2.cancelOrder(2)).rejects.toMatchObject({ status: 409, code: 'order_already_shipped' });
      await expect(client.v2.listOrders({ limit: 0 })).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
      const listed = await client.listOrders();
      expect(listed.notModified === false && listed.orders.map((o) => o.id)).toEqual([2]);
    });
  });

  describe('v3', () => {
    const clientWith = async (name: string, options: { rateLimit?: string; scopes?: string[] }) => {
      const key = generateKey();
      await s.store.createKey(name, hashKey(key), {
        scopes: options.scopes ?? DEFAULT_SCOPES,
        policies: policies(options.rateLimit ?? null),
      });
      return createOrdersClient({ baseUrl: `${server.url}/v3`, apiKey: key });
    };

    test("v3 reads, pages and cancels as v2 does, and states the key's rate limit from RateLimit", async () => {
      await s.store.importOrders([order({ id: 1 }), order({ id: 2 }), order({ id: 3, status: 'shipped' })]);
      const limited = await clientWith('limited', { rateLimit: '100/h,1000/day' });

      expect(limited.v3.rateLimit).toBeUndefined();
      const ids = [];
      for await (const each of limited.v3.orders({ limit: 2 })) ids.push(each.id);
      const one = await limited.v3.getOrder(3);
      await limited.v3.cancelOrder(1);

      expect(ids).toEqual([1, 2, 3]);
      expect(one.notModified === false && one.order.status).toBe('shipped');
      expect(limited.v3.rateLimit).toMatchObject({
        policy: 'h',
        policies: [
          { name: 'h', quota: 100, window: 3600 },
          { name: 'day', quota: 1000, window: 86400 },
        ],
      });
      // Four requests counted: 96 left, or more if the hour turned meanwhile.
      expect(limited.v3.rateLimit!.remaining).toBeGreaterThanOrEqual(96);
      expect(limited.v3.rateLimit!.remaining).toBeLessThan(100);
      // A key without policies: no fields.
      await client.v3.getOrder(2);
      expect(client.v3.rateLimit).toBeUndefined();
    });

    test('v3 places an order under a key it makes, and ships it; a shipped one is the typed 409', async () => {
      const placed = await client.v3.placeOrder({ petId: 7, quantity: 2, shipDate: '2026-12-24T10:00:00Z' });
      const shipped = await client.v3.shipOrder(placed.order.id);
      const again = await client.v3.shipOrder(placed.order.id).catch((err: unknown) => err);

      expect(placed.order).toEqual({
        id: expect.any(Number),
        petId: 7,
        quantity: 2,
        shipDate: '2026-12-24T10:00:00Z',
        complete: false,
        status: 'pending',
      });
      expect(placed.location).toBe(`/v3/store/orders/${placed.order.id}`);
      expect(placed.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
      expect(shipped.status).toBe('shipped');
      expect(again).toMatchObject({ status: 409, code: 'order_already_shipped' });
    });

    test('a placement whose answer is lost is tried again with the same key: one order, and its answer', async () => {
      let lost = 0;
      // The network loses the first answer: the server placed the order, the client never heard.
      const flaky: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        if (lost === 0 && response.status === 201) {
          lost += 1;
          throw new TypeError('fetch failed: the connection was reset');
        }
        return response;
      };
      const retrying = createOrdersClient({ baseUrl: server.url, apiKey: s.key, fetch: flaky, retries: { attempts: 3, withinMs: 5000 } });

      const placed = await retrying.v3.placeOrder(
        { petId: 9, quantity: 1, shipDate: '2026-12-24T10:00:00Z' },
        { idempotencyKey: 'lost-once' },
      );

      expect(lost).toBe(1);
      expect(placed.idempotencyKey).toBe('lost-once');
      expect(await s.store.pageOrders({ filter: {}, limit: 10 })).toEqual([expect.objectContaining({ id: placed.order.id, petId: 9 })]);
      // The key with another order is refused, and not retried.
      await expect(
        retrying.v3.placeOrder({ petId: 9, quantity: 5, shipDate: '2026-12-24T10:00:00Z' }, { idempotencyKey: 'lost-once' }),
      ).rejects.toMatchObject({
        status: 422,
        code: 'idempotency_key_reused',
      });
    });

    test('a placement told to wait past its budget gives up at once, and never sends sooner than Retry-After asks', async () => {
      const key = generateKey();
      await s.store.createKey('one-a-day', hashKey(key), { scopes: ['orders:place'], policies: policies('1/day') });
      const sent: Array<{ at: number; status: number; retryAfter: number | undefined }> = [];
      const watched: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        const header = response.headers.get('retry-after');
        sent.push({ at: Date.now(), status: response.status, retryAfter: header === null ? undefined : Number(header) });
        return response;
      };
      const placer = createOrdersClient({ baseUrl: server.url, apiKey: key, fetch: watched, retries: { attempts: 3, withinMs: 2000 } });
      await placer.v3.placeOrder({ petId: 1, quantity: 1, shipDate: '2026-12-24T10:00:00Z' });

      const spent = await placer.v3.placeOrder({ petId: 2, quantity: 1, shipDate: '2026-12-24T10:00:00Z' }).catch((err: unknown) => err);

      expect(spent).toMatchObject({ status: 429, code: 'rate_limited' });
      const [first, ...rest] = sent.slice(1);
      expect(first).toMatchObject({ status: 429, retryAfter: expect.any(Number) });
      // The day's budget comes back later than the client may wait: nothing more is sent. (In the
      // day's last two seconds it may wait and try again, but never before the time asked.)
      if (first!.retryAfter! * 1000 > 2000) expect(rest).toEqual([]);
      for (const [index, next] of rest.entries()) {
        const previous = sent[index + 1]!;
        expect(next.at - previous.at).toBeGreaterThanOrEqual(previous.retryAfter! * 1000 - 5);
      }
      expect((await s.store.pageOrders({ filter: {}, limit: 10 })).map((o) => o.petId)).toEqual([1]);
    });

    test('a key without the scope gets the typed 403; a spent limit, read after Retry-After, or thrown for a cancel', async () => {
      await s.store.importOrders([order({ id: 1 })]);
      const reader = await clientWith('reader', { scopes: ['orders:read'], rateLimit: '1/s' });

      const refused = await reader.v3.cancelOrder(1).catch((err: unknown) => err);
      // The cancel was refused for its scope, uncounted: the second's budget is whole.
      await reader.v3.getOrder(1);
      // The next read in the same second gets a 429 with Retry-After: 1, and is tried again after it.
      const again = await reader.v3.getOrder(1);
      const limited = await clientWith('limited-canceller', { rateLimit: '1/day' });
      await limited.v3.getOrder(1);
      const spent = await limited.v3.cancelOrder(1).catch((err: unknown) => err);

      expect(refused).toBeInstanceOf(OrdersApiError);
      expect(refused).toMatchObject({ status: 403, code: 'insufficient_scope' });
      expect(again.notModified === false && again.order.id).toBe(1);
      expect(spent).toMatchObject({ status: 429, code: 'rate_limited' });
      expect((spent as OrdersApiError).rateLimit).toMatchObject({ policy: 'day', remaining: 0 });
      expect((await s.store.getOrder(1))?.status).toBe('pending');
    });
  });
});

describe('a 503 with Retry-After', () => {
  /** A fetch that answers the first `busy` requests itself with a 503 and this Retry-After, then a 200 page. */
  function busyFor(busy: number, retryAfter: string) {
    const calls: string[] = [];
    const fetcher = async (input: Request | string | URL): Promise<Response> => {
      const request = input instanceof Request ? input : new Request(input);
      calls.push(`${request.method} ${new URL(request.url).pathname}`);
      if (calls.length <= busy) {
        return new Response(JSON.stringify({ code: 'service_unavailable', message: 'The server is busy; retry in 1 s', status: 503 }), {
          status: 503,
          headers: { 'Content-Type': 'application/json', 'Retry-After': retryAfter },
        });
      }
      if (request.method === 'DELETE') return new Response(null, { status: 204 });
      return new Response(JSON.stringify({ orders: [], nextCursor: null }), {
        status: 200,
        headers: { 'Content-Type': 'application/json' },
      });
    };
    return { calls, fetch: fetcher };
  }

  test('a read is tried again after the time it asks for, a few times at most', async () => {
    const busy = busyFor(2, '0');
    const client = createOrdersClient({ baseUrl: 'http://orders.test', apiKey: 'pso_x', fetch: busy.fetch });

    await expect(client.v2.listOrders({ limit: 5 })).resolves.toEqual({ orders: [], nextCursor: null });
    expect(busy.calls).toEqual(['GET /v2/store/orders', 'GET /v2/store/orders', 'GET /v2/store/orders']);

    const always = busyFor(100, '0');
    const stubborn = createOrdersClient({ baseUrl: 'http://orders.test', apiKey: 'pso_x', fetch: always.fetch, retries: { attempts: 2 } });
    await expect(stubborn.v2.listOrders()).rejects.toMatchObject({ status: 503, code: 'service_unavailable' });
    expect(always.calls.length).toBe(3);
  });

  test('not past its time budget, not after its signal aborts, and never a cancel', async () => {
    const late = busyFor(1, '5');
    const hurried = createOrdersClient({ baseUrl: 'http://orders.test', apiKey: 'pso_x', fetch: late.fetch, retries: { withinMs: 1000 } });
    await expect(hurried.v2.listOrders()).rejects.toMatchObject({ status: 503 });
    expect(late.calls.length).toBe(1);

    // Told to come back in a minute, well past this test's own time: only the abort can end its wait.
    const waiting = busyFor(1, '60');
    const patient = createOrdersClient({
      baseUrl: 'http://orders.test',
      apiKey: 'pso_x',
      fetch: waiting.fetch,
      retries: { withinMs: 120_000 },
    });
    const stop = new AbortController();
    const read = patient.v2.listOrders({}, { signal: stop.signal });
    await until(() => waiting.calls.length === 1, 'the first read was answered 503');
    stop.abort();
    await expect(read).rejects.toMatchObject({ status: 503 });
    expect(waiting.calls.length).toBe(1);

    const cancels = busyFor(1, '0');
    const client = createOrdersClient({ baseUrl: 'http://orders.test', apiKey: 'pso_x', fetch: cancels.fetch });
    await expect(client.v2.cancelOrder(42)).rejects.toMatchObject({ status: 503 });
    await expect(client.cancelOrder(42)).resolves.toBeUndefined();
    expect(cancels.calls).toEqual(['DELETE /v2/store/orders/42', 'DELETE /v1/store/orders/42']);
  });
});

test("an answer that is not the spec's Error still surfaces as OrdersApiError, without a code", async () => {
  const proxy = createOrdersClient({
    baseUrl: 'http://orders.invalid',
    apiKey: 'pso_x',
    fetch: async () => new Response('<html>Bad gateway</html>', { status: 502, headers: { 'Content-Type': 'text/html' } }),
  });

  await expect(proxy.listOrders()).rejects.toMatchObject({ name: 'OrdersApiError', status: 502, code: undefined, body: undefined });
});
