// Webhooks (v3.2): how soon a delivery follows its commit, and what delivering costs the API.
//
// - Lag: one client places orders one after another; a receiver on loopback takes each delivery
//   and its lag, from the event's occurredAt (the server's clock at the commit, on this machine) to
//   the delivery's arrival. On SQLite with one instance, and on PostgreSQL with two, the orders
//   placed through the one that does not hold the endpoint when it can be told (so the delivery
//   crosses instances through NOTIFY).
// - Cost: getOrderById at 32 connections while a client places 50 orders a second, with no
//   endpoint and with 10, one of which never answers (each attempt waits out the 15 s timeout);
//   alternating rounds, medians.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import autocannon from 'autocannon';
import { quantile, startServer, type Server } from './measure';
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

interface Receiver {
  url: string;
  lags: number[];
  received: () => number;
  close: () => Promise<void>;
}

/** A receiver on loopback: answers 204 at once (or never, when `silent`), and keeps each delivery's lag. */
async function receiver(silent = false): Promise<Receiver> {
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
      if (!silent) res.writeHead(204).end();
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

  // What delivery costs the API: getOrderById beside a steady stream of placements, with and
  // without ten endpoints, one of which never answers.
  const costLines: string[] = [];
  for (const perSecond of PLACEMENT_RATES) {
    const rates = { without: [] as number[], with: [] as number[] };
    for (let round = 0; round < ctx.rounds; round += 1) {
      for (const mode of ['without', 'with'] as const) {
        const target = { args: ['--db', ctx.dbFile(`webhooks-cost-${perSecond}-${round}-${mode}`)], env: {} };
        const key = keyOn(ctx.cli, target, 'cost');
        const receivers =
          mode === 'with' ? [...(await Promise.all(Array.from({ length: FAST_ENDPOINTS }, () => receiver()))), await receiver(true)] : [];
        for (const at of receivers) run(ctx.cli, [...target.args, 'webhooks', 'add', at.url], target.env);
        const server = await start(target);
        try {
          const id = await place(server.url, key, 0);
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
            duration: ctx.seconds,
            headers: { Authorization: `Bearer ${key}` },
          });
          placing = false;
          await placer;
          if (result.non2xx > 0) throw new Error(`getOrderById answered ${result.non2xx} non-2xx`);
          rates[mode].push(result.requests.average);
          process.stderr.write(
            `webhooks cost ${perSecond}/s, ${mode} endpoints, round ${round + 1}: ${result.requests.average.toFixed(0)} req/s\n`,
          );
        } finally {
          await server.stop();
          await Promise.all(receivers.map((at) => at.close()));
        }
      }
    }
    const median = (values: number[]) => quantile(values, 0.5);
    costLines.push(
      `| ${perSecond} (${perSecond * (FAST_ENDPOINTS + SLOW_ENDPOINTS)} deliveries/s) | ${median(rates.without).toFixed(0)} | ${median(rates.with).toFixed(0)} | ${((median(rates.with) / median(rates.without)) * 100).toFixed(1)}% |`,
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
    `Cost: getOrderById (c=32, ${ctx.seconds} s, requests/s) while orders are placed at a steady rate, with no endpoint and with ${FAST_ENDPOINTS + SLOW_ENDPOINTS} (${SLOW_ENDPOINTS} never answering, each attempt waiting out its 15 s), SQLite, median of ${ctx.rounds} alternating rounds (target: with ≥ 97% of without):`,
    '',
    '| orders placed a second | without endpoints | with 10 | with / without |',
    '|---|---:|---:|---:|',
    ...costLines,
  ];
}
