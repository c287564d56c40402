import request from 'supertest';
import { createApp } from '../../src/app';
import { createLogger } from '../../src/logger';
import { createMetrics, type Metrics } from '../../src/metrics';
import { listen, readToEnd } from '../helpers/app';
import { expectConforms } from '../helpers/contract';
import { eachStore, order, type RawOrderRow } from '../helpers/stores';

// Nothing the contract cannot serve reaches a client: the stores refuse such rows, and the list
// checks every item it streams in case one got in anyway (an old release, a careless data fix).
const NOT_DATE_TIMES = ['2026-13-45T99:99:99Z', '2026-11-20T10:00:00', '2026-02-30T10:00:00Z'];

/** The one error line and the one count a stopped reply leaves: what happened, to which order, why. */
async function expectViolation(lines: string[], metrics: Metrics, outcome: string, itemId: number): Promise<void> {
  const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(logged).toEqual([
    expect.objectContaining({
      msg: `response violates the contract; ${outcome}`,
      operationId: 'listOrders',
      itemId,
      problem: expect.stringMatching(/shipDate must match format "date-time"/),
    }),
  ]);
  expect(await metrics.registry.getSingleMetricAsString('petstore_contract_violations_total')).toContain(
    'petstore_contract_violations_total{api_version="v1",operation="listOrders"} 1',
  );
}

const row = (overrides: Partial<RawOrderRow> = {}): RawOrderRow => ({
  id: 1,
  petId: 10,
  quantity: 1,
  shipDate: '2026-12-01T10:00:00Z',
  complete: false,
  ...overrides,
});

eachStore((s) => {
  describe('a second writer cannot store an order the contract could not serve', () => {
    const refused: Array<[string, Partial<RawOrderRow>, RegExp]> = [
      ...NOT_DATE_TIMES.map((shipDate): [string, Partial<RawOrderRow>, RegExp] => [
        `shipDate ${shipDate}`,
        { shipDate },
        /order_ship_date_rfc3339/,
      ]),
      ['an id beyond the safe range', { id: 2 ** 53 }, /order_id_safe/],
      ['a petId below the safe range', { petId: -(2 ** 53) }, /order_pet_id_safe/],
      ['a quantity of 0', { quantity: 0 }, /order_quantity_range/],
    ];
    test.each(refused)('%s is refused', async (_case, overrides, constraint) => {
      // Matched by message: better-sqlite3's errors come from the realm that first loaded it, so
      // in a jest worker they need not be instances of this file's Error.
      await expect(s.fresh.insertRow(row(overrides))).rejects.toMatchObject({ message: expect.stringMatching(constraint) });

      expect(await s.fresh.rows()).toEqual([]);
    });

    test('a valid row from the same writer is accepted, and listed as it was written', async () => {
      await s.fresh.insertRow(row({ id: 7, shipDate: '2026-11-20T10:00:00.5+05:30' }));

      const res = await request(await createApp({ store: s.store }))
        .get('/v1/store/orders')
        .set(s.auth);

      expect(res.body).toEqual([{ id: 7, petId: 10, quantity: 1, shipDate: '2026-11-20T10:00:00.5+05:30', complete: false }]);
    });
  });

  describe('an order that got in with the checks off never reaches a client in a complete list', () => {
    test.each(NOT_DATE_TIMES)('shipDate %s in the first chunk: a logged 500 Error, counted as a violation', async (shipDate) => {
      await s.store.importOrders([order({ id: 1 }), order({ id: 2 })]);
      await s.fresh.insertRow(row({ id: 3, shipDate }), { checksOff: true });
      const lines: string[] = [];
      const metrics = createMetrics();
      const app = await createApp({
        store: s.store,
        metrics,
        logger: createLogger('error', { write: (line: string) => lines.push(line) }),
      });

      const res = await request(app).get('/v1/store/orders').set(s.auth);

      expect(res.status).toBe(500);
      expect(res.body).toEqual({ code: 'internal_error', message: expect.any(String), status: 500 });
      await expectConforms(res, 'listOrders');
      await expectViolation(lines, metrics, 'sending 500 instead', 3);
    });

    test.each(NOT_DATE_TIMES.flatMap((shipDate) => ['identity', 'gzip', 'br'].map((coding) => [shipDate, coding])))(
      'shipDate %s after the first chunk (%s): the connection is cut, logged and counted',
      async (shipDate, coding) => {
        await s.store.importOrders(Array.from({ length: 30 }, (_, i) => order({ id: i + 1 })));
        await s.fresh.insertRow(row({ id: 31, shipDate }), { checksOff: true });
        await s.store.importOrders(Array.from({ length: 10 }, (_, i) => order({ id: 32 + i })));
        const lines: string[] = [];
        const metrics = createMetrics();
        const server = await listen({
          store: s.store,
          metrics,
          listChunkItems: 8,
          logger: createLogger('error', { write: (line: string) => lines.push(line) }),
        });

        const res = await readToEnd(`${server.url}/v1/store/orders`, { ...s.auth, 'Accept-Encoding': coding });
        await server.close();

        // With compression the status line may still sit in the compressor when the connection is
        // cut; either way the body never completes.
        expect(res.complete).toBe(false);
        expect([200, undefined]).toContain(res.status);
        await expectViolation(lines, metrics, 'connection closed', 31);
      },
    );
  });
});
