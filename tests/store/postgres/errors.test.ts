import net from 'node:net';
import pg from 'pg';
import { StoreUnavailableError } from '../../../src/store';
import {
  ImportConflictError,
  SchemaTooNewError,
  StoreInvariantError,
  UnsupportedDatabaseError,
  openPostgresStore,
} from '../../../src/store';
import { translate as translatePg } from '../../../src/store/postgres/dialect';
import { ADMIN_URL, freshDatabase, sql } from '../../helpers/postgres';

// Which failures mean "the database cannot serve" (a 503) is decided by the error's type: the
// server's SQLSTATE, Node's network code, or the driver's plain Error. Each case is a real error
// from the driver, not one made up to look like it.
const pgTest = process.env.PETSTORE_TEST_PG_AVAILABLE === '1' ? describe : describe.skip;

/** What `run` rejects with. */
async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

pgTest('PostgreSQL errors told apart by type', () => {
  test('an error the server answers a statement with stays what it is, unless its SQLSTATE means unavailable', async () => {
    const pool = new pg.Pool({ connectionString: ADMIN_URL, max: 1 });
    try {
      const divide = await failure(() => pool.query('SELECT 1 / 0'));
      expect(divide).toBeInstanceOf(pg.DatabaseError);
      expect(translatePg(divide)).toBe(divide);

      const timeout = await failure(() => pool.query("SET statement_timeout = '10ms'; SELECT pg_sleep(1)"));
      expect((timeout as pg.DatabaseError).code).toBe('57014');
      expect(translatePg(timeout)).toBeInstanceOf(StoreUnavailableError);
    } finally {
      await pool.end();
    }
  });

  test('a connection that is refused, times out, is terminated, or comes from an ended pool is unavailable', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await failure(() => new pg.Pool({ host: '127.0.0.1', port, user: 'postgres' }).query('SELECT 1'));

    // A server that accepts and never answers: the pool's connect timeout.
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as net.AddressInfo).port;
    const slowPool = new pg.Pool({ host: '127.0.0.1', port: silentPort, user: 'postgres', connectionTimeoutMillis: 50 });
    const timedOut = await failure(() => slowPool.query('SELECT 1'));
    await slowPool.end().catch(() => undefined);
    silent.close();

    const client = new pg.Client({ connectionString: ADMIN_URL });
    await client.connect();
    client.on('error', () => undefined);
    const terminated = await failure(() => client.query('SELECT pg_terminate_backend(pg_backend_pid())'));
    await client.end().catch(() => undefined);

    const ended = new pg.Pool({ connectionString: ADMIN_URL });
    await ended.end();
    const afterEnd = await failure(() => ended.query('SELECT 1'));

    for (const err of [refused, timedOut, terminated, afterEnd]) {
      expect(translatePg(err)).toBeInstanceOf(StoreUnavailableError);
    }
  });

  test("the store's own errors and mistakes in code are never taken for an unreachable database", () => {
    const own = [
      new SchemaTooNewError('database schema version 9 is newer than this release knows (3)'),
      new StoreInvariantError('the store has no cursor secret'),
      new ImportConflictError(3, { kind: 'repeated_id', id: 7, first: 1 }),
      new TypeError("Cannot read properties of undefined (reading 'rows')"),
      'a thrown string',
    ];
    for (const err of own) expect(translatePg(err)).toBe(err);
  });
});

pgTest('a database that cannot hold the store', () => {
  test('a database not encoded in UTF8 is refused at open with a message naming its encoding, and nothing is written to it', async () => {
    const database = await freshDatabase({ encoding: 'SQL_ASCII' });
    try {
      const refused = await failure(() => openPostgresStore(database.url, { poolSize: 1 }));
      expect(refused).toBeInstanceOf(UnsupportedDatabaseError);
      expect(String(refused)).toContain(`database "${database.name}" is encoded in SQL_ASCII`);
      expect(String(refused)).toContain('UTF8');
      // Refused before the first migration: not one table was made.
      const tables = await sql<{ count: number }>(database.url, "SELECT count(*)::int AS count FROM pg_tables WHERE schemaname = 'public'");
      expect(tables[0]?.count).toBe(0);
    } finally {
      await database.drop();
    }
  });
});
