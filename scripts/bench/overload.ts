// Overload: one instance on SQLite, offered far more of its most expensive requests than it can
// serve (v1's whole list of 5,000 orders, v2's page of 100) by 32, 256 and 900 connections at once,
// each client giving up after 10 s. Once with admission as shipped, and once admitting everything
// (a limit no load reaches), in the same run.
//
// The load is a loop of node:http clients rather than autocannon, which connects every client at
// the moment its load starts: a Node.js server whose event loop is saturated accepts one new
// connection per turn of its loop (libuv since 1.45), so clients that connect into an overload
// wait seconds to be accepted whatever admission does. The rows on opened connections measure
// admission; the rows "opened under load" measure that, apart: beside ours, a bare node:http
// server under the same load (the accept loop with no admission or contract in it), and the
// remedy docs/operations.md gives, two instances sharing the port (PETSTORE_REUSE_PORT), so that
// two loops accept.
import http from 'node:http';
import { named, peakRss, probe, probeHealth, quantile, startServer, type Server } from './measure';

export interface OverloadContext {
  cli: string;
  key: string;
  /** A SQLite store holding OVERLOAD_ORDERS orders and the bench key. */
  db: string;
  /** A SQLite store holding HELD_ORDERS orders and the bench key: a list of them outlasts the socket's buffers. */
  heldDb: string;
  /** The bare node:http baseline's script, serving v1's list from a store like `db`. */
  nodeHttp: string;
  nextPort: () => number;
}

/** Instances sharing the port in the remedy's rows: one per core of this machine. */
const SHARING = 2;

/** How many orders the store holds: v1's list is all of them. */
export const OVERLOAD_ORDERS = 5000;
/** Orders in the store of the refusal's timing: a list of them held unread keeps its place. */
export const HELD_ORDERS = 100_000;
/** Requests refused one after another in the refusal's timing. */
const REFUSALS = 200;
const SECONDS = Number(process.env.BENCH_OVERLOAD_SECONDS ?? 10);
/** A client gives up on a request after this long: a timeout. */
const CLIENT_TIMEOUT_SECONDS = 10;
const LEVELS = [32, 256, 900];
const REQUESTS: Array<{ name: string; path: string }> = [
  { name: `v1 list of ${OVERLOAD_ORDERS.toLocaleString('en')}`, path: '/v1/store/orders' },
  { name: 'v2 page of 100', path: '/v2/store/orders?limit=100' },
];
/** Only the requests and modes whose names hold one of these texts, separated by `|` (BENCH_OVERLOAD_ONLY, e.g. `v2 page|as shipped`), when given. */
const OVERLOAD_ONLY = process.env.BENCH_OVERLOAD_ONLY;
const chosen = (name: string): boolean => OVERLOAD_ONLY === undefined || named(name, OVERLOAD_ONLY);
const MODES: Array<{ name: string; env: NodeJS.ProcessEnv }> = [
  { name: 'as shipped', env: {} },
  // Admission with a limit no load here reaches: every request is admitted at once.
  // What cannot start at once is refused at once, without waiting for a place.
  { name: 'sheds at once', env: { PETSTORE_ADMISSION_WAIT_MS: '0' } },
  { name: 'admits everything', env: { PETSTORE_ADMISSION_LIMIT: '1000000' } },
];

/** Targets: p99 of the 200s at most this, and 200s per second at least this share of the rate at 32. */
const P99_TARGET_MS = 1500;
/** Target: p99 of the cheap probes (/healthz, a cancel miss) at most this, at every level (32, 256 and 900 connections). */
const PROBE_P99_TARGET_MS = 250;
/** An id no order in the overload stores has: its cancel is a 404. */
const MISSING_ORDER = 999_999_999;
const RATE_TARGET = 0.8;

interface Level {
  connections: number;
  okPerSecond: number;
  p99Ms: number;
  /** Median and p99 time to a 503 (0 when there was none). */
  shedP50Ms: number;
  shedP99Ms: number;
  timeouts: number;
  errors: number;
  /** Answers other than 200, by status. */
  others: Record<string, number>;
  /** 503s that came without a Retry-After header. */
  bare503: number;
  peakRss: number;
  worstHealthzMs: number;
  /** p99 of /healthz, and of a cancel of an order that does not exist (its 404), each asked every 50 ms on a connection of its own. */
  healthzP99Ms: number;
  cancelMissP99Ms: number;
}

/**
 * A closed-loop load: `connections` keep-alive clients, each sending its next request as soon as it
 * has read the last answer, and giving a request up after CLIENT_TIMEOUT_SECONDS (it then opens a new
 * connection). Every client first opens its connection with a `/healthz` and waits for the others, so
 * the load starts on connections the server has accepted: see connectionsUnderLoad for the other case.
 */
async function load(url: string, path: string, key: string, connections: number, pid: number, opened = true): Promise<Level> {
  const clients = Array.from({ length: connections }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  if (opened) await Promise.all(clients.map((agent) => get(url, '/healthz', {}, agent)));
  const memory = peakRss(pid, 20);
  const health = probeHealth(url, 50);
  const cancelMiss = probe(url, 50, {
    method: 'DELETE',
    path: `/v1/store/orders/${MISSING_ORDER}`,
    headers: { Authorization: `Bearer ${key}` },
  });
  const times = new Map<number, number[]>();
  let timeouts = 0;
  let errors = 0;
  let bare503 = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    clients.map(async (agent) => {
      while (performance.now() < end) {
        const start = performance.now();
        const answer = await get(url, path, { Authorization: `Bearer ${key}` }, agent);
        if (answer === 'timeout') timeouts += 1;
        else if (answer === 'error') errors += 1;
        else {
          const list = times.get(answer.status) ?? [];
          list.push(performance.now() - start);
          times.set(answer.status, list);
          if (answer.status === 503 && answer.retryAfter === undefined) bare503 += 1;
        }
      }
      agent.destroy();
    }),
  );
  const healthTimes = await health.stop();
  const cancelTimes = await cancelMiss.stop();
  const ok = times.get(200) ?? [];
  const shed = times.get(503) ?? [];
  return {
    connections,
    okPerSecond: ok.length / SECONDS,
    p99Ms: ok.length > 0 ? quantile(ok, 0.99) : 0,
    shedP50Ms: shed.length > 0 ? quantile(shed, 0.5) : 0,
    shedP99Ms: shed.length > 0 ? quantile(shed, 0.99) : 0,
    timeouts,
    errors,
    others: Object.fromEntries([...times].filter(([status]) => status !== 200).map(([status, list]) => [String(status), list.length])),
    bare503,
    peakRss: memory.stop(),
    worstHealthzMs: Math.max(0, ...healthTimes),
    healthzP99Ms: healthTimes.length > 0 ? quantile(healthTimes, 0.99) : 0,
    cancelMissP99Ms: cancelTimes.length > 0 ? quantile(cancelTimes, 0.99) : 0,
  };
}

/** One GET on `agent`'s connection, read to its end: its status and Retry-After, or how it failed. */
function get(
  url: string,
  path: string,
  headers: Record<string, string>,
  agent: http.Agent,
): Promise<{ status: number; retryAfter: string | undefined } | 'timeout' | 'error'> {
  return new Promise((resolve) => {
    const req = http.get(`${url}${path}`, { agent, headers, timeout: CLIENT_TIMEOUT_SECONDS * 1000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }));
      res.on('error', () => resolve('error'));
    });
    req.on('timeout', () => {
      req.destroy();
      resolve('timeout');
    });
    req.on('error', () => resolve('error'));
  });
}

/**
 * How soon a request that cannot wait is refused: one instance with a limit of one list and no
 * queue, its place held by a client that does not read its list of HELD_ORDERS, and REFUSALS lists
 * asked one after another on another connection. Each must be a 503 with Retry-After.
 */
async function refusalTimes(ctx: OverloadContext): Promise<number[]> {
  const port = ctx.nextPort();
  const server = await startServer(ctx.cli, ['--db', ctx.heldDb, 'serve', '--port', String(port)], port, /listening/, {
    LOG_LEVEL: 'info',
    PETSTORE_ADMISSION_LIMIT: '1',
    PETSTORE_ADMISSION_QUEUE: '0',
  });
  const headers = { Authorization: `Bearer ${ctx.key}` };
  const holder = await new Promise<http.IncomingMessage>((resolve, reject) =>
    http.get(`${server.url}/v1/store/orders`, { headers }, resolve).on('error', reject),
  );
  holder.pause();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const times: number[] = [];
    for (let n = 0; n < REFUSALS; n += 1) {
      const start = performance.now();
      const answer = await get(server.url, '/v1/store/orders', headers, agent);
      times.push(performance.now() - start);
      if (typeof answer === 'string' || answer.status !== 503 || answer.retryAfter === undefined) {
        throw new Error(`a list asked while the only place was held got ${JSON.stringify(answer)}, not a 503 with Retry-After`);
      }
    }
    return times;
  } finally {
    agent.destroy();
    holder.destroy();
    await server.stop();
  }
}

export async function overloadRuns(ctx: OverloadContext): Promise<string[]> {
  const rows: string[] = [];
  const verdicts: string[] = [];
  /** `instances` servers on one port (more than one share it), or the bare node:http baseline. */
  const run = async (
    path: string,
    env: NodeJS.ProcessEnv,
    connections: number,
    opened: boolean,
    instances: number | 'node:http' = 1,
  ): Promise<Level> => {
    const port = ctx.nextPort();
    const servers: Server[] = [];
    try {
      if (instances === 'node:http') {
        servers.push(await startServer(ctx.nodeHttp, ['--db', ctx.db, '--port', String(port)], port, /listening/));
      } else {
        const shared = instances > 1 ? { PETSTORE_REUSE_PORT: 'true' } : {};
        for (let n = 0; n < instances; n += 1) {
          servers.push(
            await startServer(ctx.cli, ['--db', ctx.db, 'serve', '--port', String(port)], port, /listening/, {
              LOG_LEVEL: 'info',
              ...shared,
              ...env,
            }),
          );
        }
      }
      return await load(servers[0]!.url, path, ctx.key, connections, servers[0]!.child.pid!, opened);
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  };
  const row = (request: string, mode: string, level: Level, base: number, opened: boolean | string = true): string => {
    const others = Object.entries(level.others).map(([code, count]) => `${count.toLocaleString('en')} × ${code}`);
    if (level.bare503 > 0) others.push(`${level.bare503} of the 503s without Retry-After`);
    if (level.errors > 0) others.push(`${level.errors} connection errors`);
    return `| ${request} | ${mode} | ${level.connections}${opened === true ? '' : `, opened under load${typeof opened === 'string' ? `, ${opened}` : ''}`} | ${level.okPerSecond.toFixed(0)} | ${(level.okPerSecond / base).toFixed(2)} | ${ms(level.p99Ms)} | ${level.shedP99Ms > 0 ? `${ms(level.shedP50Ms)} / ${ms(level.shedP99Ms)}` : '–'} | ${level.timeouts} | ${others.join(', ') || 'none'} | ${(level.peakRss / 2 ** 20).toFixed(0)} MB | ${ms(level.healthzP99Ms)} / ${ms(level.worstHealthzMs)} | ${ms(level.cancelMissP99Ms)} |`;
  };
  for (const request of REQUESTS.filter((each) => chosen(each.name) || !REQUESTS.some((other) => chosen(other.name)))) {
    for (const mode of MODES.filter((each) => chosen(each.name) || !MODES.some((other) => chosen(other.name)))) {
      const levels: Level[] = [];
      for (const connections of LEVELS) {
        const level = await run(request.path, mode.env, connections, true);
        process.stderr.write(`overload ${request.name}, ${mode.name}, c=${connections}: ${JSON.stringify(level)}\n`);
        levels.push(level);
      }
      rows.push(...levels.map((level) => row(request.name, mode.name, level, levels[0]!.okPerSecond)));
      if (mode === MODES[0]) {
        verdicts.push(...judge(request.name, levels));
        const most = LEVELS[LEVELS.length - 1]!;
        const burst = await run(request.path, mode.env, most, false);
        process.stderr.write(`overload ${request.name}, ${mode.name}, opened under load: ${JSON.stringify(burst)}\n`);
        rows.push(row(request.name, mode.name, burst, levels[0]!.okPerSecond, false));
        const shared = await run(request.path, mode.env, most, false, SHARING);
        process.stderr.write(
          `overload ${request.name}, ${mode.name}, opened under load, ${SHARING} instances: ${JSON.stringify(shared)}\n`,
        );
        rows.push(row(request.name, mode.name, shared, levels[0]!.okPerSecond, `${SHARING} instances on one port (RSS: the first)`));
        verdicts.push(...judgeOpened(request.name, [burst, shared]));
        if (request === REQUESTS[0]) {
          const bare = await run(request.path, {}, most, false, 'node:http');
          process.stderr.write(`overload ${request.name}, bare node:http, opened under load: ${JSON.stringify(bare)}\n`);
          rows.push(row(request.name, 'bare node:http (none)', bare, levels[0]!.okPerSecond, false));
        }
      }
    }
  }
  const refusals = await refusalTimes(ctx);
  return [
    `## Overload: ${LEVELS.join(', ')} connections on one instance (SQLite, ${OVERLOAD_ORDERS.toLocaleString('en')} orders)`,
    '',
    `A closed loop of keep-alive clients (each sends its next request as soon as it has read the last answer, and ignores Retry-After), ${SECONDS} s per level, each request given up after ${CLIENT_TIMEOUT_SECONDS} s (a timeout); a fresh server per level; \`/healthz\` and a cancel of an order that does not exist (a \`404\`) each asked every 50 ms meanwhile, each on a connection of its own. Every client opens its connection (with a \`/healthz\`) before the load starts, except in the rows "opened under load", where all of them connect at once as the load starts; there, "${SHARING} instances on one port" is the remedy of docs/operations.md (Overload), ${SHARING} servers started with \`PETSTORE_REUSE_PORT=true\` on one port, and "bare node:http" the baseline server (the whole list, no admission) under the same load. "As shipped" is the default admission (a request that cannot start waits up to 500 ms for a place); "sheds at once" sets \`PETSTORE_ADMISSION_WAIT_MS=0\`; "admits everything" sets \`PETSTORE_ADMISSION_LIMIT\` past any load here. "vs c=32" is the 200s per second against the same request and admission at 32 connections.`,
    '',
    '| request | admission | connections | 200s/s | vs c=32 | p99 of 200s | 503s: median / p99 | timeouts | other answers | server RSS peak | /healthz: p99 / worst | cancel miss: p99 |',
    '|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|',
    ...rows,
    '',
    `Targets, as shipped, on opened connections (0 timeouts; p99 of 200s ≤ ${P99_TARGET_MS / 1000} s; every non-200 a 503 with Retry-After; 200s/s ≥ ${RATE_TARGET * 100}% of c=32; nothing shed at 32; \`/healthz\` and the cancel miss at p99 ≤ ${PROBE_P99_TARGET_MS} ms at 32, 256 and 900):`,
    '',
    ...verdicts,
    '',
    `A request refused at once (the only place held by a list of ${HELD_ORDERS.toLocaleString('en')} its client does not read, no queue; ${REFUSALS} lists asked one after another): its 503 with Retry-After in ${ms(quantile(refusals, 0.5))} at the median, ${ms(quantile(refusals, 0.99))} at p99, ${ms(Math.max(...refusals))} at worst (target ≤ 50 ms).`,
  ];
}

/** One line per request: whether connections opened under load all got their answers, on one instance and on instances sharing the port. */
function judgeOpened(name: string, [one, shared]: [Level, Level]): string[] {
  const verdict = (level: Level) =>
    level.timeouts === 0 && level.bare503 === 0 && level.errors === 0 && Object.keys(level.others).every((code) => code === '503')
      ? 'met'
      : `missed (${level.timeouts} timeouts${level.errors > 0 ? `, ${level.errors} connection errors` : ''})`;
  return [
    `- ${name}, ${one.connections} connections opened under load: one instance ${verdict(one)}; ${SHARING} instances sharing the port ${verdict(shared)}`,
  ];
}

/** One line per request: which targets its levels met, as shipped. */
function judge(name: string, levels: Level[]): string[] {
  const base = levels[0]!.okPerSecond;
  const missed: string[] = [];
  for (const level of levels) {
    const at = `at ${level.connections}`;
    if (level.timeouts > 0) missed.push(`${level.timeouts} timeouts ${at}`);
    if (level.p99Ms > P99_TARGET_MS) missed.push(`p99 ${ms(level.p99Ms)} ${at}`);
    const wrong = Object.keys(level.others).filter((code) => code !== '503');
    if (wrong.length > 0 || level.bare503 > 0 || level.errors > 0) missed.push(`answers other than 200 and 503 with Retry-After ${at}`);
    if (level.okPerSecond < RATE_TARGET * base) missed.push(`200s/s ${(level.okPerSecond / base).toFixed(2)} of c=32 ${at}`);
    if (Math.max(level.healthzP99Ms, level.cancelMissP99Ms) > PROBE_P99_TARGET_MS)
      missed.push(`probes' p99 ${ms(Math.max(level.healthzP99Ms, level.cancelMissP99Ms))} ${at}`);
  }
  if ((levels[0]!.others['503'] ?? 0) > 0) missed.push(`${levels[0]!.others['503']} shed at ${levels[0]!.connections}`);
  return [`- ${name}: ${missed.length === 0 ? 'all met' : `missed: ${missed.join('; ')}`}`];
}

function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : value >= 10 ? `${value.toFixed(0)} ms` : `${value.toFixed(1)} ms`;
}
