import fs from 'node:fs';
import path from 'node:path';
import { cli, serve, type Served } from '../../helpers/cli';
import { freshDatabase, sql } from '../../helpers/postgres';
import { tempDir } from '../../helpers/temp-dir';

// Two real server processes on one PostgreSQL database, as behind a load balancer.
const pgTest = process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? describe : describe.skip;

pgTest('two instances on one PostgreSQL database', () => {
  const tmp = tempDir();
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let env: NodeJS.ProcessEnv;
  let instances: Served[];
  let key: string;
  const unused = () => path.join(tmp.dir, 'never-created.db');

  beforeAll(async () => {
    database = await freshDatabase();
    env = { PETSTORE_DATABASE_URL: database.url };
    // The URL wins over --db: nothing may be written to the SQLite path given beside it.
    key = cli(['--db', unused(), 'keys', 'create', '--name', 'shared'], { env }).stdout.trim();
    const records = Array.from({ length: 40 }, (_, i) => ({
      id: i + 1,
      petId: 1,
      quantity: 1,
      shipDate: '2026-12-01T10:00:00Z',
      complete: false,
    }));
    expect(cli(['--db', unused(), 'orders', 'import', '-'], { env, input: JSON.stringify(records) }).status).toBe(0);
    instances = await Promise.all([serve(unused(), [], env), serve(unused(), [], env)]);
  });
  afterAll(async () => {
    for (const instance of instances ?? []) instance.child.kill('SIGTERM');
    await Promise.all((instances ?? []).map((instance) => instance.exited));
    await database.drop();
    tmp.cleanup();
  });

  const call = (instance: Served, method: string, url: string, withKey = key) =>
    fetch(`${instance.url}${url}`, { method, headers: { Authorization: `Bearer ${withKey}` } });

  test('the URL takes precedence over --db for every command', () => {
    expect(fs.existsSync(unused())).toBe(false);
  });

  test('concurrent cancels of the same orders, spread over both, give exactly one 204 per order', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => i + 1);
    const attempts = ids.flatMap((id) => Array.from({ length: 6 }, (_, n) => ({ id, instance: instances[n % 2]! })));

    const results = await Promise.all(
      attempts.map(async ({ id, instance }) => ({ id, status: (await call(instance, 'DELETE', `/v1/store/orders/${id}`)).status })),
    );

    for (const id of ids) {
      const statuses = results
        .filter((r) => r.id === id)
        .map((r) => r.status)
        .sort();
      expect([id, statuses]).toEqual([id, [204, 404, 404, 404, 404, 404]]);
    }
    const cancelled = await sql<{ n: number }>(database.url, "SELECT count(*)::int AS n FROM orders WHERE status = 'cancelled'");
    expect(cancelled[0]!.n).toBe(ids.length);
  });

  test('both instances agree on the list and its ETag, and an import through the CLI shows in both', async () => {
    const before = await Promise.all(instances.map((instance) => call(instance, 'GET', '/v1/store/orders')));
    expect(before[0]!.headers.get('etag')).toBe(before[1]!.headers.get('etag'));

    const more = [{ id: 500, petId: 2, quantity: 3, shipDate: '2026-12-24T18:00:00Z', complete: true, status: 'shipped' }];
    expect(cli(['orders', 'import', '-'], { env, input: JSON.stringify(more) }).status).toBe(0);

    for (const instance of instances) {
      const res = await call(instance, 'GET', '/v1/store/orders');
      expect(res.headers.get('etag')).not.toBe(before[0]!.headers.get('etag'));
      expect(((await res.json()) as Array<{ id: number }>).map((o) => o.id)).toContain(500);
      const cached = await fetch(`${instance.url}/v1/store/orders`, {
        headers: { Authorization: `Bearer ${key}`, 'If-None-Match': res.headers.get('etag')! },
      });
      expect(cached.status).toBe(304);
    }
  });

  test('a key revoked through the CLI is refused by both instances on the very next request', async () => {
    const other = cli(['keys', 'create', '--name', 'temporary'], { env }).stdout.trim();
    for (const instance of instances) expect((await call(instance, 'GET', '/v1/store/orders', other)).status).toBe(200);

    expect(cli(['keys', 'revoke', 'temporary'], { env }).status).toBe(0);

    for (const instance of instances) expect((await call(instance, 'GET', '/v1/store/orders', other)).status).toBe(401);
  });
});
