// v2's pages on a large store: walking every order in pages of 1,000 (time, and the server's RSS
// while it does), and one filtered page at a time (p50, p99), against v1's one streamed list of
// the same store in the same run. On SQLite, and on PostgreSQL when it answers.
import http from 'node:http';
import { spawn } from 'node:child_process';
import { DEFAULT_SCOPES, hashKey } from '../../src/keys';
import { openPostgresStore } from '../../src/store';
import { bigDownload, quantile, rss, startServer, type Server } from './measure';
import { postgresProblem, withScratchDatabases } from './postgres';

interface Context {
  cli: string;
  key: string;
  /** How many orders the stores hold. */
  count: number;
  /** The SQLite store holding them, with the bench key. */
  sqlite: string;
  /** The orders file they were imported from, for PostgreSQL. */
  ordersFile: string;
  usePostgres: boolean;
  nextPort: () => number;
}

/** The filtered pages timed one request at a time: each reads a page of 100 from a million orders. */
const FILTERS: Array<[name: string, query: string]> = [
  ['status=shipped&complete=true', 'status=shipped&complete=true&limit=100'],
  ['petId=42', 'petId=42&limit=100'],
  ['a week of ship dates, pending', 'status=pending&shipDateFrom=2026-05-01T00:00:00Z&shipDateTo=2026-05-08T00:00:00Z&limit=100'],
];
const SAMPLES = 300;

export async function pageRuns(ctx: Context): Promise<string[]> {
  const auth = { Authorization: `Bearer ${ctx.key}` };
  const rows: string[] = [];
  const latencyRows: string[] = [];
  const measure = async (store: string, target: string[], env: NodeJS.ProcessEnv): Promise<void> => {
    const port = ctx.nextPort();
    const server = await startServer(ctx.cli, [...target, 'serve', '--port', String(port)], port, /listening/, {
      LOG_LEVEL: 'info',
      ...env,
    });
    try {
      const walk = await walkAll(server, auth);
      if (walk.orders !== ctx.count) throw new Error(`walking v2's pages on ${store} gave ${walk.orders} orders, not ${ctx.count}`);
      rows.push(
        `| ${store} | ${walk.pages.toLocaleString('en')} | ${(walk.ms / 1000).toFixed(2)} s | ${(walk.ms / walk.pages).toFixed(2)} ms | ${mb(walk.rss.start)} → ${mb(walk.rss.peak)} → ${mb(walk.rss.end)} |`,
      );
      const v1 = await bigDownload(server.url, '/v1/store/orders', auth, server.child.pid!);
      for (const [name, query] of FILTERS) {
        const times = await pageLatencies(server, `/v2/store/orders?${query}`, auth);
        latencyRows.push(
          `| ${store} | ${name} | ${quantile(times, 0.5).toFixed(2)} ms | ${quantile(times, 0.99).toFixed(2)} ms | ${(v1.totalMs / 1000).toFixed(2)} s | ${(v1.totalMs / quantile(times, 0.5)).toFixed(0)}× |`,
        );
      }
      process.stderr.write(`${store}: v2 walk ${JSON.stringify(walk)}, v1 list ${v1.totalMs.toFixed(0)} ms\n`);
    } finally {
      await server.stop();
    }
  };

  await measure('SQLite', ['--db', ctx.sqlite], {});
  const pgProblem = ctx.usePostgres ? await postgresProblem() : 'BENCH_PG=0';
  if (pgProblem === null) {
    await withScratchDatabases(async (create) => {
      const url = await create();
      await runCli(ctx.cli, ['orders', 'import', ctx.ordersFile], { PETSTORE_DATABASE_URL: url });
      const store = await openPostgresStore(url);
      await store.createKey('bench', hashKey(ctx.key), { scopes: DEFAULT_SCOPES });
      await store.close();
      await measure('PostgreSQL', [], { PETSTORE_DATABASE_URL: url });
    });
  }
  const n = ctx.count.toLocaleString('en');
  return [
    `## v2: pages of ${n} orders`,
    '',
    `Every order, walked in pages of 1,000 by following \`nextCursor\` (one client, keep-alive), with the server's RSS sampled every 20 ms:`,
    '',
    '| store | pages | walk | per page | server RSS: start → peak → end |',
    '|---|---:|---:|---:|---:|',
    ...rows,
    '',
    `One filtered page of 100 (${SAMPLES} requests one after another), against v1's one streamed list of all ${n} orders on the same server:`,
    '',
    '| store | filter | p50 | p99 | v1 list, whole | v1 list / v2 page p50 |',
    '|---|---|---:|---:|---:|---:|',
    ...latencyRows,
    ...(pgProblem === null ? [] : ['', `PostgreSQL skipped: ${pgProblem}.`]),
  ];
}

/** Follows nextCursor from the first page to the last, pages of 1,000. */
async function walkAll(server: Server, auth: Record<string, string>) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const pid = server.child.pid!;
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 20);
  try {
    // One page first, so that the start is the server as it serves pages, not as it booted.
    await get(agent, `${server.url}/v2/store/orders?limit=1000`, auth);
    const start = rss(pid);
    peak = start;
    const began = performance.now();
    let pages = 0;
    let orders = 0;
    let cursor: string | null = null;
    do {
      const page = (await get(agent, `${server.url}/v2/store/orders?limit=1000${cursor === null ? '' : `&cursor=${cursor}`}`, auth)) as {
        orders: unknown[];
        nextCursor: string | null;
      };
      pages += 1;
      orders += page.orders.length;
      cursor = page.nextCursor;
    } while (cursor !== null);
    const ms = performance.now() - began;
    return { pages, orders, ms, rss: { start, peak: Math.max(peak, rss(pid)), end: rss(pid) } };
  } finally {
    clearInterval(sampler);
    agent.destroy();
  }
}

/** The time of each of SAMPLES requests of one page, one after another, after a few to warm up. */
async function pageLatencies(server: Server, path: string, auth: Record<string, string>): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < 20; i += 1) await get(agent, `${server.url}${path}`, auth);
    const times: number[] = [];
    for (let i = 0; i < SAMPLES; i += 1) {
      const began = performance.now();
      await get(agent, `${server.url}${path}`, auth);
      times.push(performance.now() - began);
    }
    return times;
  } finally {
    agent.destroy();
  }
}

/** A GET that must answer 200; its JSON body. */
function get(agent: http.Agent, url: string, headers: Record<string, string>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) reject(new Error(`GET ${url}: ${res.statusCode} ${text.slice(0, 200)}`));
          else resolve(JSON.parse(text));
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

function runCli(cli: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...env } });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${args.join(' ')} exited ${code}`))));
  });
}

const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MB`;
