// `npm run bench`: petstore-orders against bare express 5, fastify 5 (with a response schema) and
// bare node:http, on the same data with the same queries and auth, in alternating rounds.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_LIST_CHUNK_ITEMS } from '../../src/config';
import { DEFAULT_SCOPES, generateKey, hashKey } from '../../src/keys';
import type { Policy } from '../../src/rate-policy';
import { openPostgresStore, openSqliteStore, type ImportRecord } from '../../src/store';
import { bigDownload, median, medianRatio, named, peakRss, probeHealth, quantile, startServer, throughput, type Server } from './measure';
import { feedRuns } from './feed';
import { webhookRuns } from './webhooks';
import { HELD_ORDERS, OVERLOAD_ORDERS, overloadRuns } from './overload';
import { pageRuns } from './pages';
import { BENCH_SCOPES, NEW_ORDER_BODY, REPLAYED_KEY, placeReplayed } from './placements';
import { postgresProblem, postgresRuns, settleWrites, withScratchDatabases } from './postgres';
import { checkPerformancePage, onVirtualMachine, runSection, writeLatestRun } from './report';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BIG = Number(process.env.BENCH_BIG ?? 1_000_000);
// Substrings of scenario names, separated by `|`: runs only those throughput scenarios and skips the large runs.
const ONLY = process.env.BENCH_ONLY;
// The PostgreSQL rows (on by default; BENCH_PG=0 leaves them out).
const PG = process.env.BENCH_PG !== '0';
const ROOT = path.join(__dirname, '..', '..', '..');
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

type Kind = 'petstore' | 'petstore-warn' | 'express' | 'fastify' | 'node:http';
/**
 * Ours as it ships (request logs on, LOG_LEVEL=info), ours with the request logs off
 * (LOG_LEVEL=warn) beside it, and the baselines.
 */
const KINDS: Kind[] = ['petstore', 'petstore-warn', 'express', 'fastify', 'node:http'];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-bench-'));
const key = generateKey();
const auth = { Authorization: `Bearer ${key}` };
/** A key with a rate-limit policy it never reaches in a run: what every request of such a key costs. */
const limitedKey = generateKey();
const limitedAuth = { Authorization: `Bearer ${limitedKey}` };
/** The policy of limitedKey: the largest quota a policy takes. */
const NEVER_SPENT: readonly Policy[] = [{ quota: 999999999, unit: 'day' }];
/** A placement's headers: the key, the body's type, and Idempotency-Key `key`. */
const placing = (idempotencyKey: string) => ({ ...auth, 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey });

function* orders(count: number, from = 1): Generator<ImportRecord> {
  for (let i = 0; i < count; i += 1) {
    // Ship dates spread over a year, so that v2's ship-date filters cut the list.
    const shipDate = `2026-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 28) + 1).padStart(2, '0')}T09:30:00Z`;
    // Pending, so not complete: an import refuses a pending order that says it is (src/orders/import.ts).
    yield { id: from + i, petId: (i % 997) + 1, quantity: (i % 5) + 1, shipDate, complete: false };
  }
}

/**
 * A SQLite store of `count` orders, as its rows' names say: `count - 1` imported, and the one placed
 * with the Idempotency-Key that the replay rows replay. The bench's keys are on it.
 */
async function template(name: string, count: number): Promise<string> {
  const file = path.join(work, `${name}.db`);
  const store = openSqliteStore(file);
  await store.importOrders(orders(count - 1));
  await store.createKey('bench', hashKey(key), { scopes: BENCH_SCOPES });
  await store.createKey('bench-limited', hashKey(limitedKey), { scopes: DEFAULT_SCOPES, policies: NEVER_SPENT });
  await placeReplayed(store, 'bench');
  await store.close();
  return file;
}

function copy(file: string, as: string): string {
  const target = path.join(work, `${as}.db`);
  for (const suffix of ['-wal', '-shm']) fs.rmSync(target + suffix, { force: true });
  fs.copyFileSync(file, target);
  return target;
}

let nextPort = 18100;
function start(kind: Kind, db: string): Promise<Server> {
  const port = nextPort++;
  if (kind === 'petstore') return startServer(CLI, ['--db', db, 'serve', '--port', String(port)], port, /listening/, { LOG_LEVEL: 'info' });
  if (kind === 'petstore-warn')
    return startServer(CLI, ['--db', db, 'serve', '--port', String(port)], port, 'healthz', { LOG_LEVEL: 'warn' });
  const script = path.join(__dirname, 'baselines', `${kind === 'node:http' ? 'node-http' : kind}.js`);
  return startServer(script, ['--db', db, '--port', String(port)], port, /listening/);
}

interface Scenario {
  name: string;
  db: string;
  method: 'GET' | 'DELETE' | 'PUT' | 'POST';
  path: string | ((n: number) => string);
  headers: Record<string, string> | ((n: number) => Record<string, string>);
  body?: string;
  connections: number;
  expect: number;
  fresh?: boolean;
}

/** Where a full run is written, between its markers. */
const PERFORMANCE_PAGE = path.join(ROOT, 'docs', 'performance.md');

async function main(): Promise<void> {
  // A full run rewrites the performance page: its markers are checked first, so a long run is never lost.
  if (ONLY === undefined) checkPerformancePage(PERFORMANCE_PAGE);
  process.stderr.write(`preparing data in ${work}\n`);
  if (ONLY === PAGES) {
    process.stdout.write(`${(await v2Pages()).join('\n')}\n`);
    return;
  }
  if (ONLY === IMPORTS) {
    process.stdout.write(`${(await importRuns()).join('\n')}\n`);
    return;
  }
  if (ONLY === OVERLOAD) {
    process.stdout.write(`${(await overload()).join('\n')}\n`);
    return;
  }
  if (ONLY === WEBHOOKS) {
    process.stdout.write(`${(await webhooks()).join('\n')}\n`);
    return;
  }
  if (ONLY === COLD_START) {
    process.stdout.write(`${(await coldStarts(await template('list-1k', 1000))).join('\n')}\n`);
    return;
  }
  if (ONLY === FEED) {
    const file = path.join(work, `orders-${BIG}.json`);
    await writeOrdersFile(file, BIG);
    process.stdout.write(`${(await changeFeed(file)).join('\n')}\n`);
    return;
  }
  const small = await template('list-1k', 1000);
  // One order past a list's first chunk (a list of 1,000 goes out whole): the shortest list that is streamed.
  const pastChunk = await template('list-1k-and-1', DEFAULT_LIST_CHUNK_ITEMS + 1);
  const medium = await template('list-10k', 10_000);
  const pending = await template('pending', 300_000);
  const scenarios: Scenario[] = [
    {
      name: 'listOrders, 1,000 orders (c=32)',
      db: small,
      method: 'GET',
      path: '/v1/store/orders',
      headers: auth,
      connections: 32,
      expect: 200,
    },
    {
      name: `listOrders, ${(DEFAULT_LIST_CHUNK_ITEMS + 1).toLocaleString('en')} orders: one past a chunk, streamed (c=32)`,
      db: pastChunk,
      method: 'GET',
      path: '/v1/store/orders',
      headers: auth,
      connections: 32,
      expect: 200,
    },
    {
      name: 'listOrders, 10,000 orders (c=32)',
      db: medium,
      method: 'GET',
      path: '/v1/store/orders',
      headers: auth,
      connections: 32,
      expect: 200,
    },
    {
      name: 'getOrderById, one order (c=32)',
      db: small,
      method: 'GET',
      path: '/v2/store/orders/500',
      headers: auth,
      connections: 32,
      expect: 200,
    },
    {
      name: 'getOrderById, one order, key with a rate limit (c=32)',
      db: small,
      method: 'GET',
      path: '/v2/store/orders/500',
      headers: limitedAuth,
      connections: 32,
      expect: 200,
    },
    {
      name: 'getOrderById through v3, key with a rate limit: RateLimit fields (c=32)',
      db: small,
      method: 'GET',
      path: '/v3/store/orders/500',
      headers: limitedAuth,
      connections: 32,
      expect: 200,
    },
    {
      name: 'placeOrder, a new Idempotency-Key each (c=16)',
      db: small,
      method: 'POST',
      path: '/v3/store/orders',
      headers: (n) => placing(`bench-${n}`),
      body: NEW_ORDER_BODY,
      connections: 16,
      expect: 201,
      fresh: true,
    },
    {
      name: 'placeOrder, one Idempotency-Key again and again: replays (c=32)',
      db: small,
      method: 'POST',
      path: '/v3/store/orders',
      headers: placing(REPLAYED_KEY),
      body: NEW_ORDER_BODY,
      connections: 32,
      expect: 201,
      fresh: true,
    },
    {
      name: 'cancelOrder, unknown id: 404 (c=32)',
      db: small,
      method: 'DELETE',
      path: '/v1/store/orders/987654321',
      headers: auth,
      connections: 32,
      expect: 404,
    },
    {
      name: 'cancelOrder, pending orders (c=16)',
      db: pending,
      method: 'DELETE',
      path: (n) => `/v1/store/orders/${n + 1}`,
      headers: auth,
      connections: 16,
      expect: 204,
      fresh: true,
    },
    {
      name: 'listOrders, wrong key: 401 (c=32)',
      db: small,
      method: 'GET',
      path: '/v1/store/orders',
      headers: { Authorization: 'Bearer pso_wrong' },
      connections: 32,
      expect: 401,
    },
    {
      name: 'unknown path: 404 (c=32)',
      db: small,
      method: 'GET',
      path: '/v1/store/nowhere',
      headers: auth,
      connections: 32,
      expect: 404,
    },
    {
      name: 'wrong method: 405 (c=32)',
      db: small,
      method: 'PUT',
      path: '/v1/store/orders',
      headers: auth,
      connections: 32,
      expect: 405,
    },
  ];

  if (ONLY !== undefined) scenarios.splice(0, scenarios.length, ...scenarios.filter((s) => named(s.name, ONLY)));
  // Each scenario's servers take their turns back to back, so that a round's ratios compare runs
  // made under the same load of a shared host, which drifts over minutes; the kinds alternate
  // their order from round to round.
  const results = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = round % 2 === 0 ? KINDS : [...KINDS].reverse();
    for (const scenario of scenarios) {
      for (const kind of order) {
        const db = scenario.fresh ? copy(scenario.db, `fresh-${kind.replace(':', '-')}`) : scenario.db;
        const server = await start(kind, db);
        try {
          const rate = await throughput({ url: server.url, ...scenario, seconds: SECONDS });
          const key = `${scenario.name}|${kind}`;
          results.set(key, [...(results.get(key) ?? []), rate]);
          process.stderr.write(`round ${round + 1} ${kind.padEnd(9)} ${scenario.name}: ${rate.toFixed(0)} req/s\n`);
        } finally {
          await server.stop();
        }
      }
    }
  }

  const lines = [
    `## Throughput (requests/s, median of ${ROUNDS} alternating rounds of ${SECONDS} s, autocannon on the same machine; each ratio the median of the rounds' ratios)`,
    '',
    '| scenario | petstore-orders | bare express 5 | fastify 5 + schema | bare node:http | vs express | vs fastify | logs off (LOG_LEVEL=warn) | logs off vs fastify |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const scenario of scenarios) {
    const rates = (kind: Kind) => results.get(`${scenario.name}|${kind}`)!;
    const m = (kind: Kind) => median(rates(kind));
    const vs = (kind: Kind, baseline: Kind) => `${medianRatio(rates(kind), rates(baseline)).toFixed(2)}×`;
    lines.push(
      `| ${scenario.name} | ${m('petstore').toFixed(0)} | ${m('express').toFixed(0)} | ${m('fastify').toFixed(0)} | ${m('node:http').toFixed(0)} | ${vs('petstore', 'express')} | ${vs('petstore', 'fastify')} | ${m('petstore-warn').toFixed(0)} | ${vs('petstore-warn', 'fastify')} |`,
    );
  }

  if (PG) {
    const sqlite = (name: string) => {
      const rates = results.get(`${name}|petstore`);
      return rates ? median(rates) : undefined;
    };
    lines.push(
      '',
      ...(await postgresRuns({
        cli: CLI,
        key,
        limitedKey,
        limitedPolicy: NEVER_SPENT,
        seconds: SECONDS,
        rounds: ROUNDS,
        orders,
        sqlite,
        nextPort: () => nextPort++,
        only: ONLY,
      })),
    );
  }
  if (ONLY !== undefined) {
    process.stdout.write(`${lines.join('\n')}\n`);
    return;
  }
  lines.push('', ...(await coldStarts(small)), '', ...(await overload()));
  process.stderr.write(`preparing ${BIG.toLocaleString('en')} orders through the CLI import\n`);
  const importLines = await importRuns();
  const big = path.join(work, 'big.db');
  const bigRows: string[] = [];
  const bigResults = new Map<string, Awaited<ReturnType<typeof bigDownload>>[]>();
  for (let round = 0; round < Math.max(2, ROUNDS - 1); round += 1) {
    for (const kind of (round % 2 === 0 ? ['petstore', 'node:http'] : ['node:http', 'petstore']) as Kind[]) {
      const server = await start(kind, big);
      try {
        await new Promise((resolve) => setTimeout(resolve, 300));
        const result = await bigDownload(server.url, '/v1/store/orders', auth, server.child.pid!);
        bigResults.set(kind, [...(bigResults.get(kind) ?? []), result]);
        process.stderr.write(`round ${round + 1} ${kind} ${BIG} orders: ${JSON.stringify(result)}\n`);
      } finally {
        await server.stop();
      }
    }
  }
  for (const kind of ['petstore', 'node:http'] as Kind[]) {
    const runs = bigResults.get(kind)!;
    const m = (pick: (r: (typeof runs)[number]) => number) => median(runs.map(pick));
    bigRows.push(
      `| ${kind === 'petstore' ? 'petstore-orders (streamed)' : 'bare node:http (whole array)'} | ${(m((r) => r.rssGrowthBytes) / 2 ** 20).toFixed(0)} MB | ${m((r) => r.firstByteMs).toFixed(0)} ms | ${(m((r) => r.totalMs) / 1000).toFixed(2)} s | ${m((r) => r.worstHealthzMs).toFixed(0)} ms | ${(m((r) => r.bytes) / 2 ** 20).toFixed(0)} MB |`,
    );
  }
  const ours = bigResults.get('petstore')!;
  const theirs = bigResults.get('node:http')!;
  const ratio = median(ours.map((r) => r.totalMs)) / median(theirs.map((r) => r.totalMs));
  lines.push(
    '',
    `## listOrders with ${BIG.toLocaleString('en')} orders (median of ${ours.length} rounds)`,
    '',
    '| server | RSS growth | first byte | total | worst /healthz during | body |',
    '|---|---:|---:|---:|---:|---:|',
    ...bigRows,
    '',
    `Total time, petstore-orders / bare node:http: ${ratio.toFixed(2)}×`,
    '',
    ...(await pageRuns(pagesContext(big))),
    '',
    ...importLines,
    '',
    ...(await changeFeed(path.join(work, `orders-${BIG}.json`))),
    '',
    ...(await webhooks()),
  );
  const machine = {
    date: new Date().toISOString().slice(0, 10),
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model.trim() ?? 'unknown CPU',
    vm: onVirtualMachine(),
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  };
  const section = runSection(lines.join('\n'), machine);
  process.stdout.write(`${section}\n`);
  writeLatestRun(section, PERFORMANCE_PAGE);
  process.stderr.write(`written between the markers of ${PERFORMANCE_PAGE}\n`);
}

/** BENCH_ONLY's value that runs only v2's pages, on a store of BIG orders made for them. */
const PAGES = 'v2 pages';
/** BENCH_ONLY's value that runs only the imports and the cancels answered during one. */
const IMPORTS = 'imports';
/** BENCH_ONLY's value that runs only the overload rows. */
const OVERLOAD = 'overload';
/** BENCH_ONLY's value that runs only the change feed's rows (their import of BIG orders included). */
const FEED = 'feed';
/** BENCH_ONLY's value that runs only the webhook rows: their lag, and what delivering costs the API. */
const WEBHOOKS = 'webhooks';
/** BENCH_ONLY's value that runs only the cold starts. */
const COLD_START = 'cold start';

/** The webhook rows (./webhooks.ts), on stores of their own. */
function webhooks(): Promise<string[]> {
  return webhookRuns({
    cli: CLI,
    dbFile: (name) => path.join(work, `${name}.db`),
    nextPort: () => nextPort++,
    seconds: SECONDS,
    rounds: ROUNDS,
    postgres: process.env.BENCH_PG !== '0',
  });
}

/** The overload rows (./overload.ts), on a store of their own. */
async function overload(): Promise<string[]> {
  return overloadRuns({
    cli: CLI,
    key,
    db: await template('overload', OVERLOAD_ORDERS),
    heldDb: await template('overload-held', HELD_ORDERS),
    nodeHttp: path.join(__dirname, 'baselines', 'node-http.js'),
    nextPort: () => nextPort++,
  });
}

/** The change feed's rows (./feed.ts), with BIG orders from `file`. */
async function changeFeed(file: string): Promise<string[]> {
  const pgProblem = PG ? await postgresProblem() : 'BENCH_PG=0';
  let n = 0;
  return scratchDatabases(pgProblem === null, async (createDatabase) => [
    ...(await feedRuns({
      cli: CLI,
      key,
      orders,
      count: BIG,
      importFile: (target, env) => timedImport([CLI, ...target, 'orders', 'import', file], env),
      sqliteFile: (name) => path.join(work, `${name}-${(n += 1)}.db`),
      postgresDatabase: pgProblem === null ? createDatabase : undefined,
      nextPort: () => nextPort++,
    })),
    ...(pgProblem === null ? [] : ['', `PostgreSQL rows skipped: ${pgProblem}.`]),
  ]);
}

function pagesContext(sqlite: string): Parameters<typeof pageRuns>[0] {
  return {
    cli: CLI,
    key,
    count: BIG,
    sqlite,
    ordersFile: path.join(work, `orders-${BIG}.json`),
    usePostgres: PG,
    nextPort: () => nextPort++,
  };
}

/** v2's pages alone: BIG orders imported through the CLI into SQLite (and PostgreSQL), then pageRuns. */
async function v2Pages(): Promise<string[]> {
  const file = path.join(work, `orders-${BIG}.json`);
  await writeOrdersFile(file, BIG);
  const db = path.join(work, 'big.db');
  await timedImport([CLI, '--db', db, 'orders', 'import', file]);
  const store = openSqliteStore(db);
  await store.createKey('bench', hashKey(key), { scopes: DEFAULT_SCOPES });
  await store.close();
  return pageRuns(pagesContext(db));
}

/**
 * Cold start: from spawning the server to its first 200 on /healthz, petstore-orders (`serve`, as
 * shipped) against the fastify baseline (which also loads the document and compiles its response
 * schemas), alternating, median of 7 each.
 */
async function coldStarts(db: string): Promise<string[]> {
  const times = new Map<Kind, number[]>();
  for (let round = 0; round < 7; round += 1) {
    for (const kind of (round % 2 === 0 ? ['petstore', 'fastify'] : ['fastify', 'petstore']) as Kind[]) {
      const port = nextPort++;
      const script = kind === 'petstore' ? CLI : path.join(__dirname, 'baselines', 'fastify.js');
      const args = kind === 'petstore' ? ['--db', db, 'serve', '--port', String(port)] : ['--db', db, '--port', String(port)];
      const start = performance.now();
      const child = spawn(process.execPath, [script, ...args], { stdio: 'ignore', env: { ...process.env, LOG_LEVEL: 'info' } });
      try {
        for (;;) {
          const ok = await new Promise<boolean>((resolve) => {
            http
              .get(`http://127.0.0.1:${port}/healthz`, (res) => {
                res.resume();
                resolve(res.statusCode === 200);
              })
              .on('error', () => resolve(false));
          });
          if (ok) break;
          if (performance.now() - start > 30_000) throw new Error(`${kind} did not answer /healthz within 30 s`);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        times.set(kind, [...(times.get(kind) ?? []), performance.now() - start]);
      } finally {
        await new Promise((resolve) => {
          child.once('exit', resolve);
          child.kill('SIGKILL');
        });
      }
    }
  }
  const ours = median(times.get('petstore')!);
  const theirs = median(times.get('fastify')!);
  process.stderr.write(
    `cold start: petstore ${times
      .get('petstore')!
      .map((t) => t.toFixed(0))
      .join(', ')} ms; fastify ${times
      .get('fastify')!
      .map((t) => t.toFixed(0))
      .join(', ')} ms\n`,
  );
  return [
    '## Cold start: from spawning the server to its first 200 on /healthz (median of 7, alternating)',
    '',
    '| server | median | fastest | slowest |',
    '|---|---:|---:|---:|',
    `| petstore-orders (\`serve\`, SQLite) | ${ours.toFixed(0)} ms | ${Math.min(...times.get('petstore')!).toFixed(0)} ms | ${Math.max(...times.get('petstore')!).toFixed(0)} ms |`,
    `| fastify 5 + schema | ${theirs.toFixed(0)} ms | ${Math.min(...times.get('fastify')!).toFixed(0)} ms | ${Math.max(...times.get('fastify')!).toFixed(0)} ms |`,
  ];
}

/** Runs one import command to its end: its time in seconds and the peak RSS of its process. */
async function timedImport(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ seconds: number; peak: number }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  child.stdout.resume();
  const memory = peakRss(child.pid!, 20);
  const start = performance.now();
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const seconds = (performance.now() - start) / 1000;
  const peak = memory.stop();
  if (code !== 0) throw new Error(`${args.join(' ')} failed`);
  return { seconds, peak };
}

type Importer = 'sqlite' | 'sqlite-quiet' | 'naive' | 'plain' | 'postgres' | 'postgres-quiet';
const IMPORTERS: Record<Importer, string> = {
  sqlite: 'petstore-orders, SQLite',
  'sqlite-quiet': 'the same, without its change-feed events',
  postgres: 'petstore-orders, PostgreSQL (COPY)',
  'postgres-quiet': 'the same, without its change-feed events',
  naive: "naive whole-file importer, SQLite, the store's table",
  plain: 'naive whole-file importer, SQLite, a plain table',
};

/**
 * The CLI import of 100,000 and of BIG orders (with ids and status): into SQLite, into PostgreSQL,
 * and the naive whole-file importer into the same SQLite table, in alternating rounds of the same
 * run; then the cancels a running server answers while BIG orders are imported into its store.
 */
async function importRuns(): Promise<string[]> {
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
  const small = path.join(work, 'orders-100000.json');
  await writeOrdersFile(small, 100_000);
  const first = await timedImport([CLI, '--db', path.join(work, 'import-100000.db'), 'orders', 'import', small]);
  const file = path.join(work, `orders-${BIG}.json`);
  await writeOrdersFile(file, BIG);
  const pgProblem = PG ? await postgresProblem() : 'BENCH_PG=0';
  const importers: Importer[] =
    pgProblem === null
      ? ['plain', 'naive', 'sqlite', 'sqlite-quiet', 'postgres', 'postgres-quiet']
      : ['plain', 'naive', 'sqlite', 'sqlite-quiet'];
  const quiet = path.join(__dirname, 'baselines', 'import-without-events.js');
  const runs = new Map<Importer, Array<{ seconds: number; peak: number }>>();
  const naive = path.join(__dirname, 'baselines', 'naive-import.js');
  const { latency } = await scratchDatabases(pgProblem === null, async (createDatabase) => {
    for (let round = 0; round < 2; round += 1) {
      for (const importer of round === 0 ? importers : [...importers].reverse()) {
        await settleWrites(pgProblem === null);
        let result: { seconds: number; peak: number };
        if (importer === 'postgres') {
          result = await timedImport([CLI, 'orders', 'import', file], { PETSTORE_DATABASE_URL: await createDatabase() });
        } else if (importer === 'postgres-quiet') {
          result = await timedImport([quiet, '--url', await createDatabase(), file]);
        } else if (importer === 'sqlite-quiet') {
          result = await timedImport([quiet, '--db', path.join(work, `import-quiet-${round}.db`), file]);
        } else {
          // The last SQLite import of ours is the store the 1,000,000-order list is read from.
          const db = importer === 'sqlite' && round === 1 ? path.join(work, 'big.db') : path.join(work, `import-${importer}-${round}.db`);
          const command: Record<'sqlite' | 'naive' | 'plain', string[]> = {
            sqlite: [CLI, '--db', db, 'orders', 'import', file],
            naive: [naive, '--db', db, file],
            plain: [naive, '--plain', '--db', db, file],
          };
          result = await timedImport(command[importer]);
        }
        runs.set(importer, [...(runs.get(importer) ?? []), result]);
        process.stderr.write(
          `round ${round + 1} ${importer} import of ${BIG} orders: ${result.seconds.toFixed(1)} s, peak RSS ${mb(result.peak)}\n`,
        );
      }
    }
    const latency = [await cancelsDuringImport(file, 'sqlite')];
    if (pgProblem === null) latency.push(await cancelsDuringImport(file, 'postgres', await createDatabase()));
    return { latency };
  });
  const store = openSqliteStore(path.join(work, 'big.db'));
  await store.createKey('bench', hashKey(key), { scopes: DEFAULT_SCOPES });
  await store.close();

  const m = (importer: Importer, pick: (r: { seconds: number; peak: number }) => number) => median(runs.get(importer)!.map(pick));
  const seconds = (importer: Importer) => m(importer, (r) => r.seconds);
  const bigRows = importers.map(
    (importer) =>
      `| ${IMPORTERS[importer]} | ${seconds(importer).toFixed(1)} s | ${(BIG / seconds(importer)).toFixed(0)} | ${mb(m(importer, (r) => r.peak))} | ${(seconds(importer) / seconds('plain')).toFixed(2)}× | ${(seconds(importer) / seconds('sqlite')).toFixed(2)}× |`,
  );
  return [
    '## orders import through the CLI (records with ids and status)',
    '',
    `100,000 orders (${mb(fs.statSync(small).size)}) into SQLite: ${first.seconds.toFixed(1)} s, ${(100_000 / first.seconds).toFixed(0)} orders/s, peak RSS ${mb(first.peak)}.`,
    '',
    `${BIG.toLocaleString('en')} orders (${mb(fs.statSync(file).size)}), median of 2 alternating rounds, each import after the writes of those before it are out (a CHECKPOINT and sync):`,
    '',
    '| importer | time | orders/s | peak RSS | vs naive into a plain table | vs ours on SQLite |',
    '|---|---:|---:|---:|---:|---:|',
    ...bigRows,
    '',
    `The change feed's events cost the import ${(seconds('sqlite') / seconds('sqlite-quiet')).toFixed(2)}× on SQLite${pgProblem === null ? ` and ${(seconds('postgres') / seconds('postgres-quiet')).toFixed(2)}× on PostgreSQL` : ''} (with events / without; target ≤ 1.3×).`,
    ...(pgProblem === null ? [] : ['', `PostgreSQL import skipped: ${pgProblem}.`]),
    '',
    `## Cancels answered while ${BIG.toLocaleString('en')} orders are imported into the server's store`,
    '',
    'One client cancels pending orders one after another (5 ms apart) for the whole import; PETSTORE_BUSY_TIMEOUT_MS is 2000, and a cancel that waits longer gets a 503. Another asks `/healthz` every 20 ms.',
    '',
    '| store | import | cancels | 503s | median | p99 | worst | /healthz p99 | /healthz worst |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...latency.map(
      (l) =>
        `| ${l.store} | ${l.importSeconds.toFixed(1)} s | ${l.latencies.length} | ${l.refused} | ${quantile(l.latencies, 0.5).toFixed(1)} ms | ${quantile(l.latencies, 0.99).toFixed(1)} ms | ${Math.max(...l.latencies).toFixed(1)} ms | ${quantile(l.health, 0.99).toFixed(1)} ms | ${Math.max(...l.health).toFixed(1)} ms |`,
    ),
  ];
}

/** withScratchDatabases when PostgreSQL is there; otherwise a maker that refuses. */
function scratchDatabases<T>(available: boolean, fn: (create: () => Promise<string>) => Promise<T>): Promise<T> {
  if (available) return withScratchDatabases(fn);
  return fn(() => Promise.reject(new Error('PostgreSQL is not available')));
}

/**
 * A server on a store with pending orders, and the CLI importing `file` into the same store: one
 * client cancels pending orders, one at a time, for as long as the import runs. Every cancel must
 * succeed (204); their latencies are what a running server's clients see during an import.
 */
async function cancelsDuringImport(file: string, store: 'sqlite' | 'postgres', databaseUrl?: string) {
  const PENDING = 50_000;
  const FIRST = 10 * BIG + 1; // past every id the file holds
  const sqliteFile = path.join(work, 'busy.db');
  const env: NodeJS.ProcessEnv = store === 'postgres' ? { PETSTORE_DATABASE_URL: databaseUrl } : {};
  const target = store === 'postgres' ? [] : ['--db', sqliteFile];
  const seed = store === 'postgres' ? await openPostgresStore(databaseUrl!) : openSqliteStore(sqliteFile);
  await seed.importOrders(orders(PENDING, FIRST));
  await seed.createKey('bench', hashKey(key), { scopes: DEFAULT_SCOPES });
  await seed.close();
  const port = nextPort++;
  const server = await startServer(CLI, [...target, 'serve', '--port', String(port)], port, /listening/, { LOG_LEVEL: 'info', ...env });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let refused = 0;
  try {
    const importing = timedImport([CLI, ...target, 'orders', 'import', file], env);
    let running = true;
    const finishedImport = importing.finally(() => {
      running = false;
    });
    // Meanwhile another client asks /healthz every 20 ms: how long the server takes to answer
    // anything at all while cancels wait for the import's lock.
    const probe = probeHealth(server.url, 20);
    for (let n = 0; running && n < PENDING; n += 1) {
      const start = performance.now();
      const status = await new Promise<number>((resolve, reject) => {
        http
          .request(`${server.url}/v1/store/orders/${FIRST + n}`, { method: 'DELETE', agent, headers: auth }, (res) => {
            res.resume().on('end', () => resolve(res.statusCode ?? 0));
          })
          .on('error', reject)
          .end();
      });
      latencies.push(performance.now() - start);
      // A cancel the server could not answer in time is a 503: counted, not hidden.
      if (status === 503) refused += 1;
      else if (status !== 204) throw new Error(`a cancel during the import answered ${status}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const { seconds } = await finishedImport;
    const health = await probe.stop();
    process.stderr.write(
      `${store}: ${latencies.length} cancels during a ${seconds.toFixed(1)} s import, worst ${Math.max(...latencies).toFixed(1)} ms\n`,
    );
    return { store: store === 'postgres' ? 'PostgreSQL' : 'SQLite', importSeconds: seconds, latencies, refused, health };
  } finally {
    agent.destroy();
    await server.stop();
  }
}

async function writeOrdersFile(file: string, count: number): Promise<void> {
  const out = fs.createWriteStream(file);
  const write = (text: string) =>
    out.write(text) ? Promise.resolve() : new Promise<void>((resolve) => out.once('drain', () => resolve()));
  await write('[');
  let i = 0;
  for (const record of orders(count)) {
    // Every seventh shipped, and so complete: an import refuses a shipped order that is not (src/orders/import.ts).
    const status = (record.id ?? 0) % 7 === 0 ? 'shipped' : 'pending';
    await write(`${i++ === 0 ? '' : ','}${JSON.stringify({ ...record, status, complete: status === 'shipped' })}`);
  }
  await write(']');
  await new Promise<void>((resolve) => out.end(() => resolve()));
}

main()
  .catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(() => fs.rmSync(work, { recursive: true, force: true }));
