import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { createApp } from '../../../src/app';
import { openPostgresStore, type Store } from '../../../src/store';
import { PG_REQUIRED } from '../../helpers/postgres';
import { addKey, order } from '../../helpers/stores';

// A real PostgreSQL restart, on a private server of this test's own (the shared one serves the
// other test files meanwhile): initdb'd into a temporary directory and run as the postgres user,
// which needs root and the server binaries.
const VERSION = fs.existsSync('/etc/postgresql') ? fs.readdirSync('/etc/postgresql')[0] : undefined;
const BIN = VERSION === undefined ? undefined : `/usr/lib/postgresql/${VERSION}/bin`;
const possible = process.getuid?.() === 0 && BIN !== undefined && fs.existsSync(`${BIN}/initdb`);
if (!possible && !PG_REQUIRED) process.stdout.write('postgres-restart: needs root and the PostgreSQL server binaries; skipped\n');

// Where PostgreSQL is required (CI), this test is too: it then fails rather than skips.
(possible || PG_REQUIRED ? describe : describe.skip)('a PostgreSQL server that restarts under the service', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-pg-'));
  const data = path.join(dir, 'data');
  let port = 0;
  const asPostgres = (command: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', `${BIN}/${command}`, ...args], { stdio: 'pipe', timeout: 60_000 });
  const pgCtl = (action: string) =>
    asPostgres('pg_ctl', [
      '-D',
      data,
      '-w',
      '-m',
      'fast',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
      '-l',
      path.join(dir, 'log'),
      action,
    ]);
  let store: Store;

  beforeAll(async () => {
    fs.chmodSync(dir, 0o777);
    // UTF8 whatever the environment's locale (the store refuses any other encoding).
    asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
    // A port the system has just found free; should another process take it before the server
    // binds it (other test files open connections meanwhile), the server is started on another.
    for (let attempt = 1; ; attempt += 1) {
      port = await freePort();
      try {
        pgCtl('start');
        return;
      } catch (err) {
        if (attempt === 3) throw err;
      }
    }
  }, 60_000);
  afterAll(async () => {
    await store?.close();
    try {
      pgCtl('stop');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('503 Errors and a 503 /readyz while it is down; by itself back to normal once it is up', async () => {
    store = await openPostgresStore(`postgres://postgres@127.0.0.1:${port}/postgres`, { poolSize: 3, connectTimeoutMs: 500 });
    const auth = { Authorization: `Bearer ${await addKey(store)}` };
    await store.importOrders([order({ id: 1 }), order({ id: 2 })]);
    const app = await createApp({ store });
    await request(app).get('/v1/store/orders').set(auth).expect(200);

    pgCtl('stop');
    const down = await Promise.all([
      request(app).get('/readyz'),
      request(app).get('/v1/store/orders').set(auth),
      request(app).delete('/v1/store/orders/1').set(auth),
    ]);
    pgCtl('start');
    const ready = await request(app).get('/readyz');
    const cancel = await request(app).delete('/v1/store/orders/1').set(auth);
    const list = await request(app).get('/v1/store/orders').set(auth);

    expect(down.map((res) => res.status)).toEqual([503, 503, 503]);
    for (const res of down) expect(res.body).toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(ready.status).toBe(200);
    expect(cancel.status).toBe(204);
    expect((list.body as Array<{ id: number }>).map((o) => o.id)).toEqual([2]);
  }, 60_000);
});

/** A TCP port on 127.0.0.1 that nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
