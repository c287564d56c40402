import net from 'node:net';
import pg from 'pg';
import request from 'supertest';
import { createApp } from '../../../src/app';
import { instantKey } from '../../../src/date-time';
import { openPostgresStore, type Store } from '../../../src/store';
import { MIGRATIONS as PG_MIGRATIONS, migrate as migratePostgres } from '../../../src/store/postgres/migrations';
import { freshDatabase, sql, terminateConnections } from '../../helpers/postgres';
import { addKey, order } from '../../helpers/stores';

// What only the PostgreSQL store has: migrations shared by instances, and a database that can
// drop connections or go away while the service runs.
const pgTest = process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? describe : describe.skip;

pgTest('PostgreSQL store', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  beforeEach(async () => (database = await freshDatabase()));
  afterEach(() => database.drop());

  test('instances starting together migrate once, under the advisory lock', async () => {
    const stores = await Promise.all(Array.from({ length: 5 }, () => openPostgresStore(database.url, { poolSize: 2 })));
    await Promise.all(stores.map((store) => store.close()));

    const applied = await sql<{ version: number }>(database.url, 'SELECT version FROM schema_migrations ORDER BY version');
    expect(applied.map((row) => row.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
  });

  test('ship instants: a store from before keeps its own, and an import writes each as instantKey makes it', async () => {
    // The store as it was before the store wrote ship_at: a generated column.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await migratePostgres(client as unknown as pg.PoolClient, PG_MIGRATIONS.slice(0, 5));
    } finally {
      await client.end();
    }
    const earlier = ['2026-11-20T10:00:00Z', '2026-11-20T10:00:00.5+05:30', '2016-12-31T23:59:60Z'];
    for (const [i, shipDate] of earlier.entries()) {
      await sql(
        database.url,
        `INSERT INTO orders (id, pet_id, quantity, ship_date, complete, status, created_at) VALUES ($1, 1, 1, $2, false, 'pending', 'x')`,
        [i + 1, shipDate],
      );
    }
    const shipAt = () =>
      sql<{ id: string; ship_date: string; ship_at: string }>(database.url, 'SELECT id, ship_date, ship_at FROM orders ORDER BY id');
    const before = await shipAt();

    const store = await openPostgresStore(database.url);
    const later = ['2026-11-20T10:00:00-00:30', '0001-01-01T00:00:00.000001Z', '9999-12-31T23:59:59.999999+14:00'];
    await store.importOrders(later.map((shipDate, i) => order({ id: 10 + i, shipDate })));
    await store.close();

    const after = await shipAt();
    expect(after.slice(0, earlier.length)).toEqual(before);
    expect(after.map((row) => row.ship_at)).toEqual([...earlier, ...later].map(instantKey));
    const [column] = await sql<{ generated: string; notNull: boolean }>(
      database.url,
      `SELECT attgenerated AS generated, attnotnull AS "notNull" FROM pg_attribute WHERE attrelid = 'orders'::regclass AND attname = 'ship_at'`,
    );
    expect(column).toEqual({ generated: '', notNull: true });
  });

  test('a database from a newer release is refused rather than misread', async () => {
    await (await openPostgresStore(database.url)).close();
    await sql(database.url, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 'now')");

    await expect(openPostgresStore(database.url)).rejects.toThrow(
      `database schema version 99 is newer than this release knows (${PG_MIGRATIONS.at(-1)!.version})`,
    );
  });

  test('ids and quantities at the edges of the safe range come back exact', async () => {
    const store = await openPostgresStore(database.url);
    const edge = order({ id: 9007199254740991, petId: -9007199254740991, quantity: 9007199254740991 });
    await store.importOrders([edge, order({ id: -9007199254740991 })]);

    const snapshot = await store.snapshotOrders();
    const orders = await snapshot.read(10);
    await snapshot.close();
    await store.close();

    expect(orders.map((o) => [o.id, o.petId, o.quantity])).toEqual([
      [-9007199254740991, 10, 1],
      [9007199254740991, -9007199254740991, 9007199254740991],
    ]);
  });

  test('an import is not cut by the statement timeout that bounds requests', async () => {
    // The COPY lasts as long as the file streams in, and the move is one statement over every
    // record: both outlive a timeout meant for a request's statements.
    await (await openPostgresStore(database.url)).close(); // migrated under the default timeout
    const store = await openPostgresStore(database.url, { statementTimeoutMs: 100 });
    try {
      // A file that takes longer than the timeout to arrive: the COPY is open all along.
      const records = async function* () {
        for (let i = 1; i <= 20_000; i += 1) {
          if (i % 2000 === 0) await new Promise((resolve) => setTimeout(resolve, 30));
          yield order({ id: i });
        }
      };

      await expect(store.importOrders(records())).resolves.toBe(20_000);
    } finally {
      await store.close();
    }
    const [count] = await sql<{ n: string }>(database.url, 'SELECT count(*) AS n FROM orders');
    expect(Number(count!.n)).toBe(20_000);
  });

  test('a snapshot keeps its rows and ETag while cancels commit in other connections', async () => {
    const store = await openPostgresStore(database.url);
    await store.importOrders(Array.from({ length: 30 }, (_, i) => order({ id: i + 1 })));
    const snapshot = await store.snapshotOrders(5);
    const first = await snapshot.read(5);

    await store.cancelOrder(20);
    const rest = await snapshot.read(100);
    await snapshot.close();
    const etagAfter = await store.listEtag();
    await store.close();

    expect([...first, ...rest].map((o) => o.id)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(etagAfter).not.toBe(snapshot.etag);
  });

  describe('while the service runs', () => {
    let store: Store;
    let auth: { Authorization: string };
    beforeEach(async () => {
      store = await openPostgresStore(database.url, { poolSize: 3, connectTimeoutMs: 500 });
      auth = { Authorization: `Bearer ${await addKey(store)}` };
      await store.importOrders(Array.from({ length: 5 }, (_, i) => order({ id: i + 1 })));
    });
    afterEach(() => store.close());

    test('connections killed with pg_terminate_backend are replaced; the service answers and stays ready', async () => {
      const app = await createApp({ store });
      await request(app).get('/v1/store/orders').set(auth).expect(200);

      expect(await terminateConnections(database.name)).toBeGreaterThan(0);
      const after = await Promise.all([
        request(app).get('/v1/store/orders').set(auth),
        request(app).delete('/v1/store/orders/1').set(auth),
        request(app).get('/readyz'),
      ]);
      // A request whose connection died under it may get a 503; none may hang or crash.
      for (const res of after) expect([200, 204, 503]).toContain(res.status);
      const settled = await Promise.all([request(app).get('/readyz'), request(app).delete('/v1/store/orders/2').set(auth)]);
      expect(settled.map((res) => res.status)).toEqual([200, 204]);
    });
  });

  describe('when the database goes away and comes back (through a proxy the test controls)', () => {
    let proxy: ReturnType<typeof tcpProxy>;
    let store: Store;
    let auth: { Authorization: string };
    beforeEach(async () => {
      const target = new URL(database.url);
      proxy = tcpProxy(Number(target.port || 5432), target.hostname);
      await proxy.listening;
      const via = new URL(database.url);
      via.hostname = '127.0.0.1';
      via.port = String(proxy.port());
      store = await openPostgresStore(via.toString(), { poolSize: 3, connectTimeoutMs: 500, statementTimeoutMs: 2000 });
      auth = { Authorization: `Bearer ${await addKey(store)}` };
      await store.importOrders(Array.from({ length: 5 }, (_, i) => order({ id: i + 1 })));
    });
    afterEach(async () => {
      await store.close();
      await proxy.close();
    });

    test('requests get 503 Errors and /readyz 503 while it is down; both recover with no restart', async () => {
      const app = await createApp({ store });
      await request(app).get('/readyz').expect(200);

      proxy.down();
      const started = Date.now();
      const down = await Promise.all([
        request(app).get('/readyz'),
        request(app).get('/v1/store/orders').set(auth),
        request(app).delete('/v1/store/orders/1').set(auth),
      ]);
      expect(down.map((res) => res.status)).toEqual([503, 503, 503]);
      for (const res of down)
        expect(res.body).toEqual({ code: 'service_unavailable', message: 'The order store is unavailable', status: 503 });
      expect(Date.now() - started).toBeLessThan(3000);

      proxy.up();
      await request(app).get('/readyz').expect(200);
      await request(app).delete('/v1/store/orders/1').set(auth).expect(204);
      const list = await request(app).get('/v1/store/orders').set(auth).expect(200);
      expect((list.body as Array<{ id: number }>).map((o) => o.id)).toEqual([2, 3, 4, 5]);
    });
  });
});

/** A TCP proxy to the database that the test can take down (refusing and cutting connections) and bring back. */
function tcpProxy(targetPort: number, targetHost: string) {
  const sockets = new Set<net.Socket>();
  let server: net.Server;
  let port = 0;
  const serve = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(targetPort, targetHost);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  const listening = serve();
  const cut = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    listening,
    port: () => port,
    down: () => {
      server.close();
      cut();
    },
    up: () => void serve(),
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
        if (!server.listening) resolve();
      }),
  };
}
