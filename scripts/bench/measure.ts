// Measuring helpers for the bench: server processes, load, memory and latency probes.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

/** A server process under test. */
export interface Server {
  child: ChildProcess;
  url: string;
  stop: () => Promise<void>;
}

/** Where the servers' output goes while they run: a file each, removed when the server stops. */
const OUTPUT_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-bench-output-'));
process.once('exit', () => fs.rmSync(OUTPUT_DIR, { recursive: true, force: true }));

/**
 * Starts `node script args`, and resolves once it writes `marker` to its output, or, for
 * `'healthz'`, once its /healthz answers. The server writes its output (its request log lines,
 * when they are on) to a file, as a service writes to a log file or a journal: read through a
 * pipe by this process, they took the load generator's event loop, and a server with logs on was
 * measured against a slower client than one without.
 */
export function startServer(
  script: string,
  args: string[],
  port: number,
  marker: RegExp | 'healthz',
  env: NodeJS.ProcessEnv = {},
): Promise<Server> {
  const output = path.join(OUTPUT_DIR, `${port}-${Date.now()}.log`);
  const fd = fs.openSync(output, 'w');
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', fd, fd],
  });
  fs.closeSync(fd);
  const written = (): string => {
    try {
      return fs.readFileSync(output, 'utf8');
    } catch {
      return '';
    }
  };
  return new Promise((resolve, reject) => {
    let settled = false;
    const started = (): void => {
      if (settled) return;
      settled = true;
      resolve({
        child,
        url: `http://127.0.0.1:${port}`,
        stop: () =>
          new Promise((done) => {
            child.once('exit', () => {
              fs.rmSync(output, { force: true });
              done();
            });
            child.kill('SIGKILL');
          }),
      });
    };
    child.once('exit', (code) => {
      if (settled) return;
      settled = true;
      reject(new Error(`${script} exited with ${code}: ${written()}`));
    });
    const poll = (): void => {
      if (settled) return;
      if (marker !== 'healthz') {
        if (marker.test(written())) started();
        else setTimeout(poll, 20);
        return;
      }
      // A server that logs no start line (LOG_LEVEL=warn) is ready once its /healthz answers.
      fetch(`http://127.0.0.1:${port}/healthz`).then(
        (res) => (res.ok ? started() : setTimeout(poll, 20)),
        () => setTimeout(poll, 20),
      );
    };
    poll();
  });
}

/**
 * Whether `name` holds one of the texts of `only`, separated by `|` (BENCH_ONLY, BENCH_OVERLOAD_ONLY):
 * `getOrderById|: 401` picks both. (Names hold commas: `listOrders, 1,000 orders`.)
 */
export function named(name: string, only: string): boolean {
  return only.split('|').some((part) => name.includes(part));
}

/** Requests per second under autocannon, after a warm-up. Fails on any non-expected status. */
export async function throughput(options: {
  url: string;
  method: 'GET' | 'DELETE' | 'PUT' | 'POST';
  path: string | ((n: number) => string);
  /** The request's headers, or the headers of request `n` (a placement's own Idempotency-Key). */
  headers: Record<string, string> | ((n: number) => Record<string, string>);
  /** A JSON body, sent with every request. */
  body?: string;
  connections: number;
  seconds: number;
  expect: number;
}): Promise<number> {
  // One counter across the warm-up and the run, so a path or a key per request is never reused.
  let n = 0;
  const paths = options.path;
  const headers = options.headers;
  // A request the same every time is given as it is: a function that makes each one costs the load
  // generator, which shares the cores with the server, about as much CPU as a small request costs
  // the server, and so would cap the faster servers' rates.
  const request =
    typeof paths === 'string' && typeof headers !== 'function'
      ? { path: paths, headers }
      : {
          setupRequest: (req: autocannon.Request) => {
            const i = n++;
            return {
              ...req,
              path: typeof paths === 'string' ? paths : paths(i),
              headers: typeof headers === 'function' ? headers(i) : headers,
            };
          },
        };
  const run = async (duration: number) => {
    const result = await autocannon({
      url: options.url,
      connections: options.connections,
      duration,
      requests: [{ method: options.method, ...(options.body === undefined ? {} : { body: options.body }), ...request }],
    });
    const statuses = result.statusCodeStats as unknown as Record<string, { count: number }>;
    const other = Object.entries(statuses).filter(([code]) => Number(code) !== options.expect);
    if (other.length > 0 || result.errors > 0 || (result.non2xx > 0 && options.expect < 300)) {
      throw new Error(
        `unexpected responses at ${options.url}${typeof paths === 'string' ? paths : ''}: ${JSON.stringify(statuses)}, ${result.errors} errors`,
      );
    }
    return result.requests.average;
  };
  await run(1);
  return run(options.seconds);
}

/** The resident set size of a process, in bytes. */
export function rss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

/** Clock ticks a second, the unit of /proc's CPU times (Linux's USER_HZ, 100 on every common build). */
const CLOCK_TICKS = 100;

/**
 * The CPU time, in milliseconds, that a process's main thread (a Node.js server's event loop) has
 * used, from /proc/<pid>/task/<pid>/stat: its own, without its other threads (the garbage
 * collector's, libuv's, any worker's).
 */
export function mainThreadCpuMs(pid: number): number {
  return cpuMsOf(`/proc/${pid}/task/${pid}/stat`);
}

/** The CPU time, in milliseconds, that a process has used with all its threads, from /proc/<pid>/stat. */
export function processCpuMs(pid: number): number {
  return cpuMsOf(`/proc/${pid}/stat`);
}

function cpuMsOf(statFile: string): number {
  const stat = fs.readFileSync(statFile, 'utf8');
  // The fields after the command's name, which is in parentheses and may hold spaces: utime and
  // stime are the 14th and 15th of the line, so the 12th and 13th of these.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** Samples a process's RSS every `ms` until stopped; returns the peak. */
export function peakRss(pid: number, ms = 5): { stop: () => number } {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rss(pid));
    } catch {
      // the process has exited
    }
  }, ms);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

/**
 * Asks /healthz every `everyMs` on a connection of its own, one request at a time, until stopped:
 * how long the server takes to answer anything at all meanwhile. stop() gives every answer's time.
 */
export function probeHealth(url: string, everyMs: number): { stop: () => Promise<number[]> } {
  return probe(url, everyMs, { method: 'GET', path: '/healthz', headers: {} });
}

/**
 * Asks one cheap request again and again on a keep-alive connection of its own, `everyMs` after each
 * answer, until stopped: the time of each answer. What a client beside a load sees.
 */
export function probe(
  url: string,
  everyMs: number,
  request: { method: 'GET' | 'DELETE'; path: string; headers: Record<string, string> },
): { stop: () => Promise<number[]> } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let probing = true;
  const times: number[] = [];
  const running = (async () => {
    while (probing) {
      const start = performance.now();
      await new Promise<void>((resolve, reject) =>
        http
          .request(`${url}${request.path}`, { agent, method: request.method, headers: request.headers }, (res) =>
            res.resume().on('end', () => resolve()),
          )
          .on('error', reject)
          .end(),
      );
      times.push(performance.now() - start);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    stop: async () => {
      probing = false;
      await running;
      agent.destroy();
      return times;
    },
  };
}

/** Downloads a large GET, timing the first body byte and the whole, while probing /healthz. */
export async function bigDownload(url: string, path: string, headers: Record<string, string>, pid: number) {
  const before = rss(pid);
  const memory = peakRss(pid);
  const health = probeHealth(url, 20);
  const start = performance.now();
  const { firstByte, bytes, last } = await new Promise<{ firstByte: number; bytes: number; last: string }>((resolve, reject) => {
    http
      .get(`${url}${path}`, { headers }, (res) => {
        let first = 0;
        let total = 0;
        let tail = '';
        res.on('data', (chunk: Buffer) => {
          if (first === 0) first = performance.now() - start;
          total += chunk.length;
          tail = chunk.subarray(-1).toString();
        });
        res.on('end', () => resolve({ firstByte: first, bytes: total, last: tail }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
  const total = performance.now() - start;
  const healthTimes = await health.stop();
  const peak = memory.stop();
  if (last !== ']') throw new Error(`the body of ${path} did not end in ]`);
  return {
    firstByteMs: firstByte,
    totalMs: total,
    bytes,
    rssGrowthBytes: Math.max(0, peak - before),
    worstHealthzMs: Math.max(0, ...healthTimes),
  };
}

/** The median of some numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The median of the ratios of runs made side by side: `numerators[i] / denominators[i]` for each
 * round i. On a shared host whose speed drifts, a round's two runs share its conditions, which the
 * ratio of two medians, taken from different rounds, does not.
 */
export function medianRatio(numerators: number[], denominators: number[]): number {
  if (numerators.length !== denominators.length || numerators.length === 0)
    throw new Error(`medianRatio needs as many rounds of each, at least one: ${numerators.length} and ${denominators.length}`);
  return median(numerators.map((value, round) => value / denominators[round]!));
}

/** The q-quantile of some numbers (nearest rank). */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
