// `npm run bench`: petstore-orders against bare express 5, fastify 5 (with a response schema) and
// bare node:http, on the same data with the same queries and auth, in alternating rounds.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKey, hashKey } from '../../src/keys';
import { openSqliteStore, type ImportRecord } from '../../src/store';
import { bigDownload, median, peakRss, startServer, throughput, type Server } from './measure';
import { postgresRuns } from './postgres';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BIG = Number(process.env.BENCH_BIG ?? 1_000_000);
// A substring of scenario names: runs only those throughput scenarios and skips the large runs.
const ONLY = process.env.BENCH_ONLY;
// The PostgreSQL rows (on by default; BENCH_PG=0 leaves them out).
const PG = process.env.BENCH_PG !== '0';
const ROOT = path.join(__dirname, '..', '..', '..');
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

type Kind = 'petstore' | 'express' | 'fastify' | 'node:http';
const KINDS: Kind[] = ['petstore', 'express', 'fastify', 'node:http'];
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-bench-'));
const key = generateKey();
const auth = { Authorization: `Bearer ${key}` };

function* orders(count: number, from = 1): Generator<ImportRecord> {
  for (let i = 0; i < count; i += 1) {
    yield { id: from + i, petId: (i % 997) + 1, quantity: (i % 5) + 1, shipDate: '2026-12-01T09:30:00Z', complete: i % 3 === 0 };
  }
}

async function template(name: string, count: number): Promise<string> {
  const file = path.join(work, `${name}.db`);
  const store = openSqliteStore(file);
  await store.importOrders(orders(count));
  await store.createKey('bench', hashKey(key));
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
  const script = path.join(__dirname, 'baselines', `${kind === 'node:http' ? 'node-http' : kind}.js`);
  return startServer(script, ['--db', db, '--port', String(port)], port, /listening/);
}

interface Scenario {
  name: string;
  db: string;
  method: 'GET' | 'DELETE' | 'PUT';
  path: string | ((n: number) => string);
  headers: Record<string, string>;
  connections: number;
  expect: number;
  fresh?: boolean;
}

async function main(): Promise<void> {
  process.stderr.write(`preparing data in ${work}\n`);
  const small = await template('list-1k', 1000);
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
      name: 'listOrders, 10,000 orders (c=32)',
      db: medium,
      method: 'GET',
      path: '/v1/store/orders',
      headers: auth,
      connections: 32,
      expect: 200,
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

  if (ONLY !== undefined) scenarios.splice(0, scenarios.length, ...scenarios.filter((s) => s.name.includes(ONLY)));
  const results = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = round % 2 === 0 ? KINDS : [...KINDS].reverse();
    for (const kind of order) {
      for (const scenario of scenarios) {
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
    `## Throughput (requests/s, median of ${ROUNDS} alternating rounds of ${SECONDS} s, autocannon on the same machine)`,
    '',
    '| scenario | petstore-orders | bare express 5 | fastify 5 + schema | bare node:http | vs express | vs fastify |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const scenario of scenarios) {
    const m = (kind: Kind) => median(results.get(`${scenario.name}|${kind}`)!);
    const ours = m('petstore');
    lines.push(
      `| ${scenario.name} | ${ours.toFixed(0)} | ${m('express').toFixed(0)} | ${m('fastify').toFixed(0)} | ${m('node:http').toFixed(0)} | ${(ours / m('express')).toFixed(2)}× | ${(ours / m('fastify')).toFixed(2)}× |`,
    );
  }

  if (PG) {
    const sqlite = (name: string) => {
      const rates = results.get(`${name}|petstore`);
      return rates ? median(rates) : undefined;
    };
    lines.push(
      '',
      ...(await postgresRuns({ cli: CLI, key, seconds: SECONDS, rounds: ROUNDS, orders, sqlite, nextPort: () => nextPort++ })),
    );
  }
  if (ONLY !== undefined) {
    process.stdout.write(`${lines.join('\n')}\n`);
    return;
  }
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
    ...importLines,
    '',
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** Imports 100,000 and then BIG orders through the CLI, recording the time and the peak RSS of each. */
/** Runs one import command to its end: its time in seconds and the peak RSS of its process. */
async function timedImport(args: string[]): Promise<{ seconds: number; peak: number }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const memory = peakRss(child.pid!, 20);
  const start = performance.now();
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  const seconds = (performance.now() - start) / 1000;
  const peak = memory.stop();
  if (code !== 0) throw new Error(`${args.join(' ')} failed`);
  return { seconds, peak };
}

/**
 * The CLI import of 100,000 and of BIG orders (with ids and status), and, for BIG, the naive
 * whole-file importer into the same table, in alternating rounds of the same run.
 */
async function importRuns(): Promise<string[]> {
  const rows: string[] = [];
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
  const small = path.join(work, 'orders-100000.json');
  await writeOrdersFile(small, 100_000);
  const first = await timedImport([CLI, '--db', path.join(work, 'import-100000.db'), 'orders', 'import', small]);
  rows.push(
    `| 100,000 | ${mb(fs.statSync(small).size)} | ${first.seconds.toFixed(1)} s | ${(100_000 / first.seconds).toFixed(0)} | ${mb(first.peak)} |`,
  );
  const file = path.join(work, `orders-${BIG}.json`);
  await writeOrdersFile(file, BIG);
  const runs: Record<'ours' | 'naive', Array<{ seconds: number; peak: number }>> = { ours: [], naive: [] };
  const naive = path.join(__dirname, 'baselines', 'naive-import.js');
  for (let round = 0; round < 2; round += 1) {
    for (const kind of round === 0 ? (['naive', 'ours'] as const) : (['ours', 'naive'] as const)) {
      // The last import of ours is the store the 1,000,000-order list is read from.
      const db = kind === 'ours' && round === 1 ? path.join(work, 'big.db') : path.join(work, `import-${kind}-${round}.db`);
      const result = await timedImport(kind === 'ours' ? [CLI, '--db', db, 'orders', 'import', file] : [naive, '--db', db, file]);
      runs[kind].push(result);
      process.stderr.write(
        `round ${round + 1} ${kind} import of ${BIG} orders: ${result.seconds.toFixed(1)} s, peak RSS ${mb(result.peak)}\n`,
      );
    }
  }
  const m = (kind: 'ours' | 'naive', pick: (r: { seconds: number; peak: number }) => number) => median(runs[kind].map(pick));
  rows.push(
    `| ${BIG.toLocaleString('en')} | ${mb(fs.statSync(file).size)} | ${m('ours', (r) => r.seconds).toFixed(1)} s | ${(BIG / m('ours', (r) => r.seconds)).toFixed(0)} | ${mb(m('ours', (r) => r.peak))} |`,
  );
  const store = openSqliteStore(path.join(work, 'big.db'));
  await store.createKey('bench', hashKey(key));
  await store.close();
  return [
    '## orders import through the CLI (records with ids and status)',
    '',
    '| orders | file | time | orders/s | peak RSS of the CLI |',
    '|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    `${BIG.toLocaleString('en')} orders, median of 2 alternating rounds: petstore-orders ${m('ours', (r) => r.seconds).toFixed(1)} s, ` +
      `a naive whole-file importer into the same table ${m('naive', (r) => r.seconds).toFixed(1)} s (peak RSS ${mb(m('naive', (r) => r.peak))}): ` +
      `${(m('ours', (r) => r.seconds) / m('naive', (r) => r.seconds)).toFixed(2)}× its time.`,
  ];
}

async function writeOrdersFile(file: string, count: number): Promise<void> {
  const out = fs.createWriteStream(file);
  const write = (text: string) =>
    out.write(text) ? Promise.resolve() : new Promise<void>((resolve) => out.once('drain', () => resolve()));
  await write('[');
  let i = 0;
  for (const record of orders(count)) {
    const status = (record.id ?? 0) % 7 === 0 ? 'shipped' : 'pending';
    await write(`${i++ === 0 ? '' : ','}${JSON.stringify({ ...record, status })}`);
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
