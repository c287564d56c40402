// Webhooks (v3.2): how soon a delivery follows its commit, and what delivering costs the API.
//
// - Lag: one client places orders one after another; a receiver on loopback takes each delivery
//   and its lag, from the event's occurredAt (the server's clock at the commit, on this machine) to
//   the delivery's arrival. On SQLite with one instance, and on PostgreSQL with two, the orders
//   placed through the one that does not hold the endpoint when it can be told (so the delivery
//   crosses instances through NOTIFY).
// - Cost: getOrderById at 32 connections while a client places 5 or 50 orders a second, on a
//   server with no endpoint and on one with 10, one of which never answers (each attempt waits out
//   the 15 s timeout): the two side by side, taking turns in short windows; medians of pairs.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { mainThreadCpuMs, processCpuMs, quantile, startServer, type Server } from './measure';
import { postgresProblem, withScratchDatabases } from './postgres';

export interface WebhookBenchContext {
  cli: string;
  /** A fresh SQLite file's path (not yet made). */
  dbFile: (name: string) => string;
  nextPort: () => number;
  seconds: number;
  rounds: number;
  postgres: boolean;
}

const LOCAL = { PETSTORE_WEBHOOK_ALLOW_HTTP: 'true', PETSTORE_WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'info' };
const ORDER = JSON.stringify({ petId: 7, quantity: 1, shipDate: '2026-12-24T10:00:00Z' });
const LAG_ORDERS = 200;
const SLOW_ENDPOINTS = 1;
const FAST_ENDPOINTS = 9;
/** Orders placed a second beside the reads: each is an event for every endpoint. */
const PLACEMENT_RATES = [5, 50];
/** The cost's windows: pairs a round, and each window's length. */
const COST_PAIRS = 6;
const COST_WINDOW_SECONDS = 2;

/** The cost's receivers, in a process of their own (./receivers.ts): their URLs, fast ones first. */
async function receiverProcess(fast: number, slow: number): Promise<{ urls: string[]; pid: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [path.join(__dirname, 'receivers.js'), String(fast), String(slow)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const urls = await new Promise<string[]>((resolve, reject) => {
    let seen = '';
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('\n')) resolve(JSON.parse(seen) as string[]);
    });
    child.once('exit', (code) => reject(new Error(`the receivers exited with ${code}`)));
  });
  if (child.pid === undefined) throw new Error('the receivers have no process');
  return {
    urls,
    pid: child.pid,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

interface Receiver {
  url: string;
  lags: number[];
  received: () => number;
  close: () => Promise<void>;
}

/** The lag's receiver, on loopback in the bench's process: answers 204 at once, and keeps each delivery's lag. */
async function receiver(): Promise<Receiver> {
  const lags: number[] = [];
  let received = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received += 1;
      const { occurredAt } = JSON.parse(body) as { occurredAt: string };
      lags.push(Date.now() - Date.parse(occurredAt));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    lags,
    received: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Runs a CLI command on a store; its stdout, or it throws with its stderr. */
function run(cli: string, args: string[], env: NodeJS.ProcessEnv): string {
  const result = spawnSync(process.execPath, [cli, ...args], { env: { ...process.env, ...LOCAL, ...env }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

/** A key that may read, place and manage webhooks, on the store `target` names. */
function keyOn(cli: string, target: { args: string[]; env: NodeJS.ProcessEnv }, name: string): string {
  return run(
    cli,
    [...target.args, 'keys', 'create', '--name', name, '--scopes', 'orders:read,orders:place,webhooks:manage'],
    target.env,
  ).trim();
}

async function place(url: string, key: string, n: number): Promise<number> {
  const res = await fetch(`${url}/v3/store/orders`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': `bench-${Date.now()}-${n}` },
    body: ORDER,
  });
  if (res.status !== 201) throw new Error(`placeOrder answered ${res.status}`);
  return ((await res.json()) as { id: number }).id;
}

/** The lag of LAG_ORDERS deliveries, each order placed through `through` once the last was delivered. */
async function lag(through: string, key: string, at: Receiver): Promise<number[]> {
  for (let n = 0; n < LAG_ORDERS; n += 1) {
    const before = at.received();
    await place(through, key, n);
    const deadline = Date.now() + 10_000;
    while (at.received() === before) {
      if (Date.now() > deadline) throw new Error('a delivery took more than 10 s');
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
  return at.lags.slice(-LAG_ORDERS);
}

const ms = (value: number) => `${value.toFixed(value < 10 ? 1 : 0)} ms`;
const lagRow = (store: string, instances: string, lags: number[]) =>
  `| ${store} | ${instances} | ${lags.length} | ${ms(quantile(lags, 0.5))} | ${ms(quantile(lags, 0.95))} | ${ms(Math.max(...lags))} |`;

export async function webhookRuns(ctx: WebhookBenchContext): Promise<string[]> {
  const lagRows: string[] = [];
  const start = (target: { args: string[]; env: NodeJS.ProcessEnv }): Promise<Server> => {
    const port = ctx.nextPort();
    return startServer(ctx.cli, [...target.args, 'serve', '--port', String(port)], port, /listening/, { ...LOCAL, ...target.env });
  };

  // Lag on SQLite, one instance.
  {
    const target = { args: ['--db', ctx.dbFile('webhooks-lag')], env: {} };
    const key = keyOn(ctx.cli, target, 'lag');
    const at = await receiver();
    run(ctx.cli, [...target.args, 'webhooks', 'add', at.url], target.env);
    const server = await start(target);
    try {
      const lags = await lag(server.url, key, at);
      lagRows.push(lagRow('SQLite', 'one', lags));
      process.stderr.write(`webhooks lag sqlite: median ${quantile(lags, 0.5).toFixed(1)} ms\n`);
    } finally {
      await server.stop();
      await at.close();
    }
  }
  // Lag on PostgreSQL, two instances: orders placed through each in turn, so that half the
  // deliveries are made by the instance that did not commit them.
  if (ctx.postgres && (await postgresProblem()) === null) {
    await withScratchDatabases(async (create) => {
      const target = { args: [] as string[], env: { PETSTORE_DATABASE_URL: await create() } };
      const key = keyOn(ctx.cli, target, 'lag');
      const at = await receiver();
      run(ctx.cli, ['webhooks', 'add', at.url], target.env);
      const servers = [await start(target), await start(target)];
      try {
        const lags = [...(await lag(servers[0]!.url, key, at)), ...(await lag(servers[1]!.url, key, at))];
        lagRows.push(lagRow('PostgreSQL', 'two, placing through each in turn', lags));
        process.stderr.write(`webhooks lag postgres: median ${quantile(lags, 0.5).toFixed(1)} ms\n`);
      } finally {
        await Promise.all(servers.map((server) => server.stop()));
        await at.close();
      }
    });
  }

  // What delivery costs the API: getOrderById beside a steady stream of placements, on a server
  // with no endpoint and on one with ten, one of which never answers. The host's speed drifts by
  // tens of percent from one second to the next, so the two servers run side by side and take turns
  // in short windows, each placing orders only in its own; each pair of windows gives a ratio, and a
  // round of fresh servers the median of its pairs.
  const costLines: string[] = [];
  for (const perSecond of PLACEMENT_RATES) {
    const ratios: number[] = [];
    const rates = { without: [] as number[], with: [] as number[] };
    /** The server's event loop's CPU per API request in each window, in µs: the steadier figure on a noisy host. */
    const loopCpu = { without: [] as number[], with: [] as number[] };
    /**
     * CPU time a second, in ms, in each window: of the server's other threads (delivery's own, the
     * garbage collector's, libuv's) and of the receivers' process. On a host of few cores, what
     * delivering takes from the API is taken there.
     */
    const otherCpu = { without: [] as number[], with: [] as number[] };
    const receiverCpu = { without: [] as number[], with: [] as number[] };
    for (let round = 0; round < ctx.rounds; round += 1) {
      const receivers = await receiverProcess(FAST_ENDPOINTS, SLOW_ENDPOINTS);
      const servers: Partial<Record<'without' | 'with', { server: Server; key: string; id: number }>> = {};
      try {
        for (const mode of ['without', 'with'] as const) {
          const target = { args: ['--db', ctx.dbFile(`webhooks-cost-${perSecond}-${round}-${mode}`)], env: {} };
          const key = keyOn(ctx.cli, target, 'cost');
          if (mode === 'with') for (const url of receivers.urls) run(ctx.cli, [...target.args, 'webhooks', 'add', url], target.env);
          const server = await start(target);
          servers[mode] = { server, key, id: await place(server.url, key, 0) };
        }
        const window = async (mode: 'without' | 'with', seconds: number): Promise<number> => {
          const { server, key, id } = servers[mode]!;
          const pid = server.child.pid;
          if (pid === undefined) throw new Error(`the ${mode} server has no process`);
          const cpuBefore = mainThreadCpuMs(pid);
          const processBefore = processCpuMs(pid);
          const receiversBefore = processCpuMs(receivers.pid);
          let placing = true;
          const placer = (async () => {
            for (let n = 1; placing; n += 1) {
              await place(server.url, key, n);
              await new Promise((resolve) => setTimeout(resolve, 1000 / perSecond));
            }
          })();
          const result = await autocannon({
            url: `${server.url}/v3/store/orders/${id}`,
            connections: 32,
            duration: seconds,
            headers: { Authorization: `Bearer ${key}` },
          });
          placing = false;
          await placer;
          if (result.non2xx > 0) throw new Error(`getOrderById answered ${result.non2xx} non-2xx`);
          const loop = mainThreadCpuMs(pid) - cpuBefore;
          loopCpu[mode].push((loop * 1000) / result.requests.total);
          otherCpu[mode].push((processCpuMs(pid) - processBefore - loop) / seconds);
          receiverCpu[mode].push((processCpuMs(receivers.pid) - receiversBefore) / seconds);
          return result.requests.total / seconds;
        };
        // Both warmed up first, then the pairs, in alternating order.
        await window('without', 1);
        await window('with', 1);
        for (const mode of ['without', 'with'] as const) for (const cpu of [loopCpu, otherCpu, receiverCpu]) cpu[mode].splice(-1);
        const pairs: number[] = [];
        for (let pair = 0; pair < COST_PAIRS; pair += 1) {
          const order = pair % 2 === 0 ? (['without', 'with'] as const) : (['with', 'without'] as const);
          const got: Partial<Record<'without' | 'with', number>> = {};
          for (const mode of order) got[mode] = await window(mode, COST_WINDOW_SECONDS);
          rates.without.push(got.without!);
          rates.with.push(got.with!);
          pairs.push(got.with! / got.without!);
        }
        const ratio = quantile(pairs, 0.5);
        ratios.push(ratio);
        process.stderr.write(
          `webhooks cost ${perSecond}/s, round ${round + 1}: with / without ${(ratio * 100).toFixed(1)}% (pairs ${pairs.map((one) => (one * 100).toFixed(0)).join(', ')})\n`,
        );
      } finally {
        await Promise.all(Object.values(servers).map(({ server }) => server.stop()));
        await receivers.stop();
      }
    }
    const median = (values: number[]) => quantile(values, 0.5);
    costLines.push(
      `| ${perSecond} (${perSecond * (FAST_ENDPOINTS + SLOW_ENDPOINTS)} deliveries/s) | ${median(rates.without).toFixed(0)} | ${median(rates.with).toFixed(0)} | ${(median(ratios) * 100).toFixed(1)}% (rounds ${ratios.map((one) => `${(one * 100).toFixed(1)}%`).join(', ')}) | ${median(loopCpu.without).toFixed(0)} / ${median(loopCpu.with).toFixed(0)} µs | ${median(otherCpu.without).toFixed(0)} / ${median(otherCpu.with).toFixed(0)} ms | ${median(receiverCpu.with).toFixed(0)} ms |`,
    );
  }
  return [
    '## Webhooks: lag and cost',
    '',
    `Lag: from an event's \`occurredAt\` (the server's clock at the commit) to its delivery's arrival at a receiver on loopback, ${LAG_ORDERS} orders placed one after another, each once the last was delivered.`,
    '',
    '| store | instances | deliveries | median | p95 | worst |',
    '|---|---|---:|---:|---:|---:|',
    ...lagRows,
    '',
    `Cost: getOrderById (c=32, requests/s) while orders are placed at a steady rate, on a server with no endpoint and on one with ${FAST_ENDPOINTS + SLOW_ENDPOINTS} (${SLOW_ENDPOINTS} never answering, each attempt waiting out its 15 s; the receivers in a process of their own), SQLite. The two run side by side and take turns in windows of ${COST_WINDOW_SECONDS} s, ${COST_PAIRS} pairs a round, in alternating order; with / without is the median over ${ctx.rounds} rounds of fresh servers of each round's median pair (target: ≥ 97%). The event loop's CPU per API request is the server's main thread's CPU time in a window (Linux's /proc) over the API requests it answered, every window's median: what delivery costs the loop that answers the API, steadier than the rates on a noisy host. Beside it, the CPU time a second (median window) of the server's other threads (delivery's own among them) and of the receivers' process: what delivering takes from the cores the load and the API share:`,
    '',
    "| orders placed a second | without endpoints (median window) | with 10 (median window) | with / without | event loop CPU per API request, without / with (median window) | other threads' CPU a second, without / with | receivers' CPU a second |",
    '|---|---:|---:|---:|---:|---:|---:|',
    ...costLines,
  ];
}
