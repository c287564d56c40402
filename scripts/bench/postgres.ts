// The PostgreSQL part of `npm run bench`: the same scenarios as SQLite's on one database, then
// two instances sharing it against one.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { DEFAULT_SCOPES, hashKey } from '../../src/keys';
import type { Policy } from '../../src/rate-policy';
import { openPostgresStore, type ImportRecord } from '../../src/store';
import { median, named, startServer, throughput, type Server } from './measure';
import { BENCH_SCOPES, NEW_ORDER_BODY, REPLAYED_KEY, placeReplayed } from './placements';

const ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Context {
  cli: string;
  key: string;
  /** A key whose policy is never spent in a run, and that policy. */
  limitedKey: string;
  limitedPolicy: readonly Policy[];
  seconds: number;
  rounds: number;
  orders: (count: number) => Iterable<ImportRecord>;
  /** petstore-orders on SQLite, by scenario name, for the comparison column. */
  sqlite: (name: string) => number | undefined;
  nextPort: () => number;
  /** Only the scenarios whose names hold one of these texts, separated by `|` (BENCH_ONLY), when given. */
  only?: string | undefined;
}

/**
 * Writes out every buffer PostgreSQL holds dirty, and then the kernel's: before each timed import,
 * so that none pays for the writes an earlier one left (a CHECKPOINT that the last one's WAL set
 * off would otherwise land on whichever comes next).
 */
export async function settleWrites(postgres: boolean): Promise<void> {
  if (postgres) await admin('CHECKPOINT');
  spawnSync('sync');
}

async function admin(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

function urlOf(database: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Whether the bench's PostgreSQL server answers: null when it does, else why not, for the README line. */
export async function postgresProblem(): Promise<string | null> {
  try {
    await admin('SELECT 1');
    return null;
  } catch (err) {
    return `no server at ${ADMIN_URL} (${(err as Error).message}); set BENCH_PG_URL`;
  }
}

/**
 * Runs `fn` with a maker of scratch databases: empty, or a copy of `template` (the URL of one it
 * made); it returns each one's URL. Every one it made is dropped afterwards, whatever happened.
 */
export async function withScratchDatabases<T>(fn: (create: (template?: string) => Promise<string>) => Promise<T>): Promise<T> {
  const prefix = `bench_${randomBytes(4).toString('hex')}`;
  const made: string[] = [];
  const nameOf = (url: string) => new URL(url).pathname.slice(1);
  try {
    return await fn(async (template) => {
      const database = `${prefix}_${made.length}`;
      await admin(`CREATE DATABASE ${database}${template === undefined ? '' : ` TEMPLATE ${nameOf(template)}`}`);
      made.push(database);
      return urlOf(database);
    });
  } finally {
    for (const database of made.reverse()) await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
  }
}

/** Runs the PostgreSQL scenarios; returns the README table, or one line saying why it could not. */
export async function postgresRuns(ctx: Context): Promise<string[]> {
  const problem = await postgresProblem();
  if (problem !== null) return [`PostgreSQL rows skipped: ${problem}.`];
  /** Fills a store with `count` orders, as the rows' names say: `count - 1` imported and the one placement the replay rows replay. */
  const fill = async (url: string, count: number): Promise<void> => {
    const store = await openPostgresStore(url);
    await store.importOrders(ctx.orders(count - 1));
    await store.createKey('bench', hashKey(ctx.key), { scopes: BENCH_SCOPES });
    await store.createKey('bench-limited', hashKey(ctx.limitedKey), { scopes: DEFAULT_SCOPES, policies: ctx.limitedPolicy });
    await placeReplayed(store, 'bench');
    await store.close();
  };
  return withScratchDatabases(async (create) => {
    process.stderr.write('preparing PostgreSQL databases\n');
    const list = await create();
    await fill(list, 1000);
    const pendingTemplate = await create();
    await fill(pendingTemplate, 300_000);
    const pending = () => create(pendingTemplate);

    const start = (url: string): Promise<Server> => {
      const port = ctx.nextPort();
      return startServer(ctx.cli, ['serve', '--port', String(port)], port, /listening/, {
        LOG_LEVEL: 'info',
        PETSTORE_DATABASE_URL: url,
      });
    };
    const auth = { Authorization: `Bearer ${ctx.key}` };
    const placing = (idempotencyKey: string) => ({ ...auth, 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey });
    const rates = new Map<string, number[]>();
    const record = (name: string, rate: number) => {
      rates.set(name, [...(rates.get(name) ?? []), rate]);
      process.stderr.write(`postgres ${name}: ${rate.toFixed(0)} req/s\n`);
    };
    const single: Array<{
      name: string;
      method: 'GET' | 'DELETE' | 'POST';
      path: (n: number) => string;
      connections: number;
      expect: number;
      fresh: boolean;
      headers?: Record<string, string> | ((n: number) => Record<string, string>);
      body?: string;
    }> = [
      {
        name: 'listOrders, 1,000 orders (c=32)',
        method: 'GET' as const,
        path: () => '/v1/store/orders',
        connections: 32,
        expect: 200,
        fresh: false,
      },
      {
        name: 'getOrderById, one order (c=32)',
        method: 'GET' as const,
        path: () => '/v2/store/orders/500',
        connections: 32,
        expect: 200,
        fresh: false,
      },
      {
        name: 'getOrderById, one order, key with a rate limit (c=32)',
        method: 'GET' as const,
        path: () => '/v2/store/orders/500',
        connections: 32,
        expect: 200,
        fresh: false,
        headers: { Authorization: `Bearer ${ctx.limitedKey}` },
      },
      {
        name: 'cancelOrder, unknown id: 404 (c=32)',
        method: 'DELETE' as const,
        path: () => '/v1/store/orders/987654321',
        connections: 32,
        expect: 404,
        fresh: false,
      },
      {
        name: 'cancelOrder, pending orders (c=16)',
        method: 'DELETE' as const,
        path: (n: number) => `/v1/store/orders/${n + 1}`,
        connections: 16,
        expect: 204,
        fresh: true,
      },
      {
        name: 'placeOrder, a new Idempotency-Key each (c=16)',
        method: 'POST' as const,
        path: () => '/v3/store/orders',
        connections: 16,
        expect: 201,
        fresh: true,
        headers: (n: number) => placing(`bench-${n}`),
        body: NEW_ORDER_BODY,
      },
      {
        name: 'placeOrder, one Idempotency-Key again and again: replays (c=32)',
        method: 'POST' as const,
        path: () => '/v3/store/orders',
        connections: 32,
        expect: 201,
        fresh: true,
        headers: placing(REPLAYED_KEY),
        body: NEW_ORDER_BODY,
      },
    ];
    if (ctx.only !== undefined) single.splice(0, single.length, ...single.filter((scenario) => named(scenario.name, ctx.only ?? '')));
    for (let round = 0; round < ctx.rounds; round += 1) {
      for (const scenario of single) {
        const database = scenario.fresh ? await pending() : list;
        // One instance with all the connections, then two instances with half each, at once.
        const one = await start(database);
        try {
          record(scenario.name, await throughput({ url: one.url, ...scenario, headers: scenario.headers ?? auth, seconds: ctx.seconds }));
        } finally {
          await one.stop();
        }
        const twoDatabase = scenario.fresh ? await pending() : list;
        const two = await Promise.all([start(twoDatabase), start(twoDatabase)]);
        try {
          const halves = await Promise.all(
            two.map((server, i) =>
              throughput({
                url: server.url,
                ...scenario,
                // Interleaved ids, so the two instances never cancel the same order (nor place under the same key).
                path: (n: number) => scenario.path(n * 2 + i),
                connections: scenario.connections / 2,
                headers:
                  typeof scenario.headers === 'function'
                    ? (
                        (h) => (n: number) =>
                          h(n * 2 + i)
                      )(scenario.headers)
                    : (scenario.headers ?? auth),
                seconds: ctx.seconds,
              }),
            ),
          );
          record(`${scenario.name}, two instances`, halves[0]! + halves[1]!);
        } finally {
          await Promise.all(two.map((server) => server.stop()));
        }
      }
    }
    // One order's read and placements against fastify on PostgreSQL making the same queries (a
    // placement's insert without an Idempotency-Key), in alternating rounds, a placement's on a fresh database.
    const compared = single.filter(
      (scenario) => scenario.name === 'getOrderById, one order (c=32)' || scenario.name.startsWith('placeOrder, a new'),
    );
    const startFastify = (url: string): Promise<Server> => {
      const port = ctx.nextPort();
      return startServer(
        path.join(__dirname, 'baselines', 'fastify-postgres.js'),
        ['--url', url, '--port', String(port)],
        port,
        /listening/,
      );
    };
    for (let round = 0; round < ctx.rounds; round += 1) {
      for (const scenario of compared) {
        for (const kind of round % 2 === 0 ? ['petstore', 'fastify'] : ['fastify', 'petstore']) {
          const database = scenario.fresh ? await pending() : list;
          const server = kind === 'petstore' ? await start(database) : await startFastify(database);
          try {
            record(
              `${scenario.name}|${kind}`,
              await throughput({ url: server.url, ...scenario, headers: scenario.headers ?? auth, seconds: ctx.seconds }),
            );
          } finally {
            await server.stop();
          }
        }
      }
    }
    const lines = [
      `## PostgreSQL (requests/s, median of ${ctx.rounds} rounds of ${ctx.seconds} s; PostgreSQL on the same machine)`,
      '',
      '| scenario | SQLite, one instance | PostgreSQL, one instance | PostgreSQL, two instances | two / one |',
      '|---|---:|---:|---:|---:|',
    ];
    for (const scenario of single) {
      const one = median(rates.get(scenario.name)!);
      const two = median(rates.get(`${scenario.name}, two instances`)!);
      const sqlite = ctx.sqlite(scenario.name);
      lines.push(
        `| ${scenario.name} | ${sqlite === undefined ? '-' : sqlite.toFixed(0)} | ${one.toFixed(0)} | ${two.toFixed(0)} | ${(two / one).toFixed(2)}× |`,
      );
    }
    if (compared.length > 0) {
      lines.push(
        '',
        '| on PostgreSQL, one instance | petstore-orders | fastify 5 + pg, the same queries | vs fastify |',
        '|---|---:|---:|---:|',
      );
      for (const scenario of compared) {
        const ours = median(rates.get(`${scenario.name}|petstore`)!);
        const theirs = median(rates.get(`${scenario.name}|fastify`)!);
        lines.push(`| ${scenario.name} | ${ours.toFixed(0)} | ${theirs.toFixed(0)} | ${(ours / theirs).toFixed(2)}× |`);
      }
    }
    return lines;
  });
}
