import createClient from 'openapi-fetch';
import type { paths } from '../src/contract/types';
import type { Store } from '../src/store';
import { listen } from './helpers/app';
import { storeKinds } from './helpers/stores';
import { addKey, order } from './helpers/store';

describe.each(storeKinds())('$name store', (kind) => {
  beforeAll(() => kind.setUp());
  afterAll(() => kind.tearDown());

  let store: Store;
  let server: Awaited<ReturnType<typeof listen>>;
  let client: ReturnType<typeof createClient<paths>>;

  beforeEach(async () => {
    ({ store } = await kind.open());
    const key = await addKey(store);
    server = await listen({ store });
    client = createClient<paths>({ baseUrl: `${server.url}/v1`, headers: { Authorization: `Bearer ${key}` } });
  });
  afterEach(async () => {
    await server.close();
    await store.close();
  });

  test('a consumer lists orders, cancels one, and sees it gone, through the typed client', async () => {
    await store.importOrders([order({ id: 1, petId: 11 }), order({ id: 2, petId: 22 })]);

    const before = await client.GET('/store/orders');
    const cancel = await client.DELETE('/store/orders/{orderId}', { params: { path: { orderId: 1 } } });
    const after = await client.GET('/store/orders');

    expect(before.response.status).toBe(200);
    expect(before.data?.map((o) => o.petId)).toEqual([11, 22]);
    expect(cancel.response.status).toBe(204);
    expect(cancel.error).toBeUndefined();
    expect(after.data?.map((o) => o.id)).toEqual([2]);
  });

  test('a consumer gets the typed Error object when an order has shipped', async () => {
    await store.importOrders([order({ id: 3, status: 'shipped' })]);

    const { error, response } = await client.DELETE('/store/orders/{orderId}', { params: { path: { orderId: 3 } } });

    expect(response.status).toBe(409);
    expect(error).toEqual({
      code: 'order_already_shipped',
      message: 'Order 3 has already shipped and cannot be cancelled',
      status: 409,
    });
  });

  test('a consumer reads a pet through the deprecated operation and sees its sunset', async () => {
    await store.importOrders([order({ id: 1, petId: 11 })]);

    const { data, response } = await client.GET('/pets/{petId}', { params: { path: { petId: 11 } } });

    expect(data).toEqual({ id: 11 });
    expect(response.headers.get('sunset')).toBe('Wed, 30 Jun 2027 00:00:00 GMT');
  });
});
