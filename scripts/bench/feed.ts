// The change feed's rows of `npm run bench`: how soon a waiting read hears of a commit made by
// another instance, and how fast a consumer tailing the feed gets through a large import's events.
import http from 'node:http';
import { DEFAULT_SCOPES, hashKey } from '../../src/keys';
import { openPostgresStore, openSqliteStore, type ImportRecord, type Store } from '../../src/store';
import { median, quantile, startServer, type Server } from './measure';

/** What the feed's runs need from the bench. */
export interface FeedContext {
  cli: string;
  key: string;
  /** Orders as the bench makes them, ids from `from`. */
  orders: (count: number, from?: number) => Iterable<ImportRecord>;
  /** Runs the CLI's import of the orders file into a store, to its end: its time in seconds. */
  importFile: (target: string[], env: NodeJS.ProcessEnv) => Promise<{ seconds: number }>;
  /** How many orders the orders file holds (ids 1 to count). */
  count: number;
  /** A fresh SQLite file, and a fresh PostgreSQL database when PostgreSQL is there. */
  sqliteFile: (name: string) => string;
  postgresDatabase: (() => Promise<string>) | undefined;
  nextPort: () => number;
}

/** One store's place: the serve flags and environment that reach it, and how to seed it. */
interface Place {
  name: 'SQLite' | 'PostgreSQL';
  target: string[];
  env: NodeJS.ProcessEnv;
  open: () => Promise<Store>;
}

const WAKES = 40;

export async function feedRuns(ctx: FeedContext): Promise<string[]> {
  const places = async (name: string): Promise<Place[]> => {
    const file = ctx.sqliteFile(name);
    const sqlite: Place = { name: 'SQLite', target: ['--db', file], env: {}, open: async () => openSqliteStore(file) };
    if (ctx.postgresDatabase === undefined) return [sqlite];
    const url = await ctx.postgresDatabase();
    return [sqlite, { name: 'PostgreSQL', target: [], env: { PETSTORE_DATABASE_URL: url }, open: () => openPostgresStore(url) }];
  };
  const wakeRows: string[] = [];
  for (const place of await places('feed-wake')) {
    const wakes = await wakeLatency(ctx, place);
    wakeRows.push(
      `| ${place.name} | ${wakes.length} | ${quantile(wakes, 0.5).toFixed(1)} ms | ${quantile(wakes, 0.99).toFixed(1)} ms | ${Math.max(...wakes).toFixed(1)} ms |`,
    );
  }
  const tailRows: string[] = [];
  for (const place of await places('feed-tail')) {
    const tail = await tailDuringImport(ctx, place);
    tailRows.push(
      `| ${place.name} | ${tail.importSeconds.toFixed(1)} s | ${tail.events.toLocaleString('en')} | ${tail.afterImportMs.toFixed(0)} ms | ${tail.drainSeconds.toFixed(2)} s | ${(tail.events / tail.drainSeconds).toFixed(0)} |`,
    );
  }
  return [
    '## The change feed',
    '',
    `Wake-up across instances: two servers on one store; a read waits on one (\`wait=20\`) while the other cancels an order. The time from the cancel's \`204\` to the waiting read's answer, ${WAKES} times:`,
    '',
    '| store | wakes | median | p99 | worst |',
    '|---|---:|---:|---:|---:|',
    ...wakeRows,
    '',
    `A consumer tails the feed (\`wait=20&limit=1000\`, from \`from=latest\`) while the CLI imports ${ctx.count.toLocaleString('en')} orders into a store that has orders. The import's events show when it commits (PostgreSQL) or publishes its last slice (SQLite); then the consumer reads them all:`,
    '',
    "| store | import | events read | first event, from the import's end | all of them read in | events/s |",
    '|---|---:|---:|---:|---:|---:|',
    ...tailRows,
  ];
}

/** A GET or DELETE on a keep-alive agent: its status and body. */
function call(agent: http.Agent, url: string, method: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .request(url, { method, agent, headers }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject)
      .end();
  });
}

interface FeedPage {
  events: unknown[];
  nextCursor: string;
}

async function seeded(ctx: FeedContext, place: Place, count: number, from: number): Promise<void> {
  const store = await place.open();
  try {
    await store.importOrders(ctx.orders(count, from));
    await store.createKey('bench', hashKey(ctx.key), { scopes: DEFAULT_SCOPES });
  } finally {
    await store.close();
  }
}

async function serve(ctx: FeedContext, place: Place): Promise<Server> {
  const port = ctx.nextPort();
  return startServer(ctx.cli, [...place.target, 'serve', '--port', String(port)], port, /listening/, { LOG_LEVEL: 'info', ...place.env });
}

/** From a cancel's 204 on one instance to the answer of a read waiting on another, WAKES times. */
async function wakeLatency(ctx: FeedContext, place: Place): Promise<number[]> {
  await seeded(ctx, place, WAKES, 1);
  const [waiter, writer] = [await serve(ctx, place), await serve(ctx, place)];
  const auth = { Authorization: `Bearer ${ctx.key}` };
  const waitAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const writeAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  try {
    for (let id = 1; id <= WAKES; id += 1) {
      const latest = await call(waitAgent, `${waiter.url}/v2/store/order-events?from=latest`, 'GET', auth);
      const { nextCursor } = JSON.parse(latest.body) as FeedPage;
      let answeredAt = 0;
      const waiting = call(waitAgent, `${waiter.url}/v2/store/order-events?wait=20&after=${nextCursor}`, 'GET', auth).then((res) => {
        answeredAt = performance.now();
        return res;
      });
      // Long enough for the read to be waiting.
      await new Promise((resolve) => setTimeout(resolve, 150));
      const cancel = await call(writeAgent, `${writer.url}/v2/store/orders/${id}`, 'DELETE', auth);
      const committedAt = performance.now();
      if (cancel.status !== 204) throw new Error(`the cancel of order ${id} answered ${cancel.status}`);
      const woken = await waiting;
      const events = (JSON.parse(woken.body) as FeedPage).events;
      if (woken.status !== 200 || events.length !== 1) throw new Error(`the waiting read answered ${woken.status}: ${woken.body}`);
      latencies.push(Math.max(0, answeredAt - committedAt));
    }
    process.stderr.write(`${place.name}: a waiting read woken by another instance's cancel, median ${median(latencies).toFixed(1)} ms\n`);
    return latencies;
  } finally {
    waitAgent.destroy();
    writeAgent.destroy();
    await waiter.stop();
    await writer.stop();
  }
}

/** A consumer tailing the feed while the orders file is imported: when the events came, and how fast they were read. */
async function tailDuringImport(ctx: FeedContext, place: Place) {
  // Orders past every id of the file, so that the import is published as it is into a store in use.
  await seeded(ctx, place, 1000, 10 * ctx.count + 1);
  const server = await serve(ctx, place);
  const auth = { Authorization: `Bearer ${ctx.key}` };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const latest = JSON.parse((await call(agent, `${server.url}/v2/store/order-events?from=latest`, 'GET', auth)).body) as FeedPage;
    let importEnded = 0;
    const importing = ctx.importFile(place.target, place.env).then((result) => {
      importEnded = performance.now();
      return result;
    });
    let cursor = latest.nextCursor;
    let events = 0;
    let first = 0;
    while (events < ctx.count) {
      const page = await call(agent, `${server.url}/v2/store/order-events?wait=20&limit=1000&after=${cursor}`, 'GET', auth);
      if (page.status !== 200) throw new Error(`a read of the feed answered ${page.status}: ${page.body}`);
      const read = JSON.parse(page.body) as FeedPage;
      if (read.events.length > 0 && first === 0) first = performance.now();
      events += read.events.length;
      cursor = read.nextCursor;
    }
    const last = performance.now();
    const { seconds } = await importing;
    process.stderr.write(`${place.name}: ${events} events read while tailing a ${seconds.toFixed(1)} s import\n`);
    return { importSeconds: seconds, events, afterImportMs: first - importEnded, drainSeconds: (last - first) / 1000 };
  } finally {
    agent.destroy();
    await server.stop();
  }
}
