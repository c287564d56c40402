import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen } from '../helpers/app';
import { generateKey, hashKey } from '../../src/keys';
import { addKey, freshStore, order, policies } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

/**
 * Whether a reply had been written at three moments of the turn that answered it: as the app
 * returned, once the microtasks and ticks had run, and in the turn's check phase.
 */
interface Written {
  readonly atReturn: boolean;
  readonly afterTicks: boolean;
  readonly atCheck: boolean;
}

// A reply made at once leaves with every other reply made in the same turn of the event loop, at the
// turn's end (reply.ts, sendReply): each write on its own woke the client once per reply.
describe('replies made in one turn of the event loop', () => {
  let served: Awaited<ReturnType<typeof listen>>;
  let key: string;
  /** A key with a rate-limit policy: its requests are resumed once their count has committed. */
  const limited = generateKey();
  const written: Written[] = [];

  beforeAll(async () => {
    const { store } = freshStore(tmp.dir);
    await store.importOrders([order({ id: 7 })]);
    key = await addKey(store);
    await store.createKey('limited', hashKey(limited), { scopes: ['orders:read'], policies: policies('1000/h') });
    served = await listen({ store });
    // After the app's own listener: the app has answered (or not) by the time this one runs.
    served.server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
      const atReturn = res.writableEnded;
      process.nextTick(() => {
        const afterTicks = res.writableEnded;
        setImmediate(() => written.push({ atReturn, afterTicks, atCheck: res.writableEnded }));
      });
    });
  });
  afterAll(() => served.close());
  beforeEach(() => (written.length = 0));

  test.each([
    ['an order read at once', '/v2/store/orders/7', true, 200],
    ['a 404 for an order that does not exist', '/v2/store/orders/8', true, 404],
    ['a 401 for a request without a key', '/v2/store/orders/7', false, 401],
  ])('%s is held until the turn ends, then sent whole', async (_name, path, keyed, status) => {
    const res = await fetch(served.url + path, { headers: keyed ? { Authorization: `Bearer ${key}` } : {} });
    const body: unknown = await res.json();

    expect(res.status).toBe(status);
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(JSON.stringify(body)));
    expect(written).toEqual([{ atReturn: false, afterTicks: false, atCheck: true }]);
  });

  // A key with a policy is counted in the store: its request goes on once the count has committed,
  // in the check phase (src/store/sqlite/counter.ts), and its reply leaves there, with those of the
  // other requests counted with it, not a turn later.
  test('a reply to a request resumed after its count is written in the turn the count committed', async () => {
    const res = await fetch(`${served.url}/v2/store/orders/7`, { headers: { Authorization: `Bearer ${limited}` } });
    await res.json();

    expect(res.status).toBe(200);
    expect(written).toEqual([{ atReturn: false, afterTicks: false, atCheck: true }]);
  });
});
