import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PG_TYPES } from '../../src/store/postgres/store';

/**
 * The PostgreSQL server the tests use: the local one, user `postgres`, unless
 * PETSTORE_TEST_PG_URL names another. Each test file gets a fresh database of its own there.
 */
export const ADMIN_URL = process.env.PETSTORE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Set by CI: a missing PostgreSQL is then a failure, never a skip. */
export const PG_REQUIRED = process.env.PETSTORE_TEST_PG === 'required';

let available: Promise<boolean> | undefined;

/** Whether the PostgreSQL server answers; checked once per test file. */
export function postgresAvailable(): Promise<boolean> {
  available ??= (async () => {
    const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return available;
}

async function admin<T>(use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates an empty database for one test run, in the server's default encoding or in `encoding`
 * (then with the C locale, which suits every encoding); `drop` removes it, closing any connection left.
 */
export async function freshDatabase({ encoding }: { encoding?: string } = {}): Promise<{
  url: string;
  name: string;
  drop: () => Promise<void>;
}> {
  const name = `petstore_test_${randomBytes(6).toString('hex')}`;
  const encoded = encoding === undefined ? '' : ` ENCODING '${encoding}' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`;
  await admin((client) => client.query(`CREATE DATABASE ${name}${encoded}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** Runs SQL against a test database directly, around the service. */
export async function sql<R extends pg.QueryResultRow>(url: string, text: string, values?: unknown[]): Promise<R[]> {
  const client = new pg.Client({ connectionString: url, types: PG_TYPES });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Terminates every other connection to a test database, as a failover or an operator would. */
export async function terminateConnections(name: string): Promise<number> {
  return admin(async (client) => {
    const { rows } = await client.query<{ n: string }>(
      'SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [name],
    );
    return Number(rows[0]?.n ?? 0);
  });
}

/** The line a developer sees when the PostgreSQL tests are skipped. */
export const SKIP_LINE =
  `PostgreSQL tests skipped: no server at ${ADMIN_URL.replace(/:[^:@/]*@/, ':***@')}. ` +
  'Start one (or set PETSTORE_TEST_PG_URL) to run them; PETSTORE_TEST_PG=required makes this an error.';
