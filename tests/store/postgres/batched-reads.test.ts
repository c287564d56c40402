import pg from 'pg';
import { hashKey } from '../../../src/keys';
import { openPostgresStore, type Store } from '../../../src/store';
import { freshDatabase } from '../../helpers/postgres';
import { order } from '../../helpers/stores';

// The key checks and one-order reads that requests make in one turn of the event loop are one
// statement each on PostgreSQL, and each still gets its own answer, read as the store is then.
const pgTest = process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? describe : describe.skip;

pgTest('PostgreSQL store: reads made together', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let store: Store;
  beforeEach(async () => {
    database = await freshDatabase();
    store = await openPostgresStore(database.url, { poolSize: 4 });
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
    await database.drop();
  });

  /** The texts of the statements the store's pools send while `body` runs (the spy calls through). */
  async function statementsOf<T>(body: () => Promise<T>): Promise<{ result: T; texts: string[] }> {
    const spy = jest.spyOn(pg.Pool.prototype, 'query');
    try {
      const result = await body();
      const texts = spy.mock.calls.map(([config]: unknown[]) => (typeof config === 'string' ? config : (config as { text: string }).text));
      return { result, texts };
    } finally {
      spy.mockRestore();
    }
  }

  test('keys of every state and orders of every kind, asked in one turn: one statement each, every answer its own', async () => {
    const now = new Date();
    const past = new Date(now.getTime() - 60_000).toISOString();
    const later = new Date(now.getTime() + 3_600_000).toISOString();
    const secret = (name: string) => hashKey(`pso_${name}_secret_for_the_batched_reads_test`);
    await store.createKey('active', secret('active'), { scopes: ['orders:read'] });
    await store.createKey('expired', secret('expired'), { scopes: ['orders:read'], expiresAt: past });
    await store.createKey('revoked', secret('revoked'), { scopes: ['orders:read'] });
    await store.revokeKey('revoked');
    await store.createKey('in-grace', secret('in-grace'), { scopes: ['orders:read', 'orders:cancel'] });
    await store.rotateKey('in-grace', secret('in-grace-new'), later);
    await store.createKey('grace-over', secret('grace-over'), { scopes: ['orders:read'] });
    await store.rotateKey('grace-over', secret('grace-over-new'), past);
    await store.importOrders([order({ id: 1 }), order({ id: 2, petId: 22 }), order({ id: 3 })]);
    await store.cancelOrder(3);

    const at = now.toISOString();
    const { result, texts } = await statementsOf(() =>
      Promise.all([
        Promise.all(
          ['active', 'expired', 'revoked', 'in-grace', 'in-grace-new', 'grace-over', 'grace-over-new', 'unknown', 'active'].map(
            async (name) => store.findKey(secret(name), at),
          ),
        ),
        Promise.all([1, 2, 3, 99, Number.MAX_SAFE_INTEGER + 2, 2].map(async (id) => store.getOrder(id))),
      ]),
    );
    const [keys, orders] = result;

    expect(keys.map((key) => key && [key.name, key.state, [...key.scopes].sort()])).toEqual([
      ['active', 'active', ['orders:read']],
      ['expired', 'expired', ['orders:read']],
      ['revoked', 'revoked', ['orders:read']],
      // The replaced secret works in its grace; the new one at once.
      ['in-grace', 'active', ['orders:cancel', 'orders:read']],
      ['in-grace', 'active', ['orders:cancel', 'orders:read']],
      // Once the grace is over, the replaced secret is refused as a revoked key's.
      ['grace-over', 'revoked', ['orders:read']],
      ['grace-over', 'active', ['orders:read']],
      null,
      ['active', 'active', ['orders:read']],
    ]);
    expect(orders.map((found) => found && [found.id, found.petId, found.status])).toEqual([
      [1, 10, 'pending'],
      [2, 22, 'pending'],
      // Cancelled, unknown, and an id no order can have: none.
      undefined,
      undefined,
      undefined,
      [2, 22, 'pending'],
    ]);
    expect(texts.filter((text) => text.includes('FROM api_keys'))).toHaveLength(1);
    expect(texts.filter((text) => text.includes('FROM orders'))).toHaveLength(1);
  });

  test('a revocation holds from the next check: nothing is kept between turns', async () => {
    const hash = hashKey('pso_revoked_between_turns_for_the_batched_reads_test');
    await store.createKey('soon-revoked', hash, { scopes: ['orders:read'] });
    expect((await store.findKey(hash, new Date().toISOString()))?.state).toBe('active');
    await store.revokeKey('soon-revoked');
    expect((await store.findKey(hash, new Date().toISOString()))?.state).toBe('revoked');
  });
});
