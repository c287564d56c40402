import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { hashKey } from '../../src/keys';
import { LogOutput } from '../../src/log-output';
import { BIN, cli, cliEnv } from '../helpers/cli';
import { rowsOf } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';
import { until } from '../helpers/wait';
import { ROOT } from '../helpers/project';

// The server and the CLI under a log reader that dies, or that stays alive and stops reading:
// their stdout and stderr are a real pipe (a FIFO) whose only reader is another process.
const tmp = tempDir();
afterAll(tmp.cleanup);

const SHUTDOWN_MS = 2000;
/** What a shutdown may take beyond its drain timeout: closing the store and the last log lines. */
const MARGIN_MS = 1500;

/**
 * A process that reads the FIFO and copies it to its stdout. SIGUSR2 toggles reading: while it is
 * paused the pipe fills up and the writer's writes stop completing, as with a stuck collector.
 */
const READER = `
  const fs = require('node:fs');
  const input = fs.createReadStream(process.argv[1], { highWaterMark: 4096 });
  let reading = true;
  input.on('data', (chunk) => process.stdout.write(chunk));
  process.on('SIGUSR2', () => ((reading = !reading) ? input.resume() : input.pause()));
  // A paused file stream holds nothing open: without this the paused reader would simply exit.
  setInterval(() => undefined, 60000);
  process.stdout.write('reader ready\\n');
`;

/** Every process a test started, killed at the end whatever the test's outcome. */
const started: ChildProcess[] = [];
afterAll(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

interface LogReader {
  child: ChildProcess;
  output: () => string;
  waitFor: (text: string | RegExp) => Promise<void>;
  kill: () => Promise<void>;
}

let fifoCount = 0;

/** Makes a FIFO, starts its reader, and opens the FIFO's write end for the process under test. */
async function logPipe(): Promise<{ reader: LogReader; writeFd: number }> {
  fifoCount += 1;
  const fifo = path.join(tmp.dir, `log-${fifoCount}.fifo`);
  expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
  const child = spawn(process.execPath, ['-e', READER, fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(child);
  let text = '';
  const waiters: Array<() => void> = [];
  child.stdout.on('data', (chunk: Buffer) => {
    text += chunk.toString();
    for (const check of waiters.splice(0)) check();
  });
  const waitFor = (pattern: string | RegExp): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the log never showed ${String(pattern)}:\n${text.slice(-2000)}`)), 20_000);
      const check = (): void => {
        if (typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text)) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitFor('reader ready');
  // Opening a FIFO for writing waits for its reader; the promise form waits off the event loop.
  const writeFd = await new Promise<number>((resolve, reject) => fs.open(fifo, 'w', (err, fd) => (err ? reject(err) : resolve(fd))));
  return {
    reader: { child, output: () => text, waitFor, kill: () => (child.kill('SIGKILL'), exited) },
    writeFd,
  };
}

/** Runs the built bin with its stdout and stderr on `fd`, and closes this process's copy of it. */
function runOnPipe(
  fd: number,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  input?: string,
): { child: ChildProcess; exited: Promise<{ code: number | null; afterMs: () => number }> } {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: cliEnv({ LOG_LEVEL: 'info', PETSTORE_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_MS), ...env }),
    stdio: [input === undefined ? 'ignore' : 'pipe', fd, fd],
  });
  started.push(child);
  fs.closeSync(fd);
  if (input !== undefined) child.stdin!.end(input);
  let signalledAt = Date.now();
  const kill = child.kill.bind(child);
  child.kill = (signal?: NodeJS.Signals | number) => ((signalledAt = Date.now()), kill(signal));
  const exited = new Promise<{ code: number | null; afterMs: () => number }>((resolve) =>
    child.once('exit', (code) => {
      const at = Date.now();
      resolve({ code, afterMs: () => at - signalledAt });
    }),
  );
  return { child, exited };
}

/** Starts `serve` on a fresh database with its output on a FIFO read by a reader process. */
async function serveOnPipe(name: string) {
  const db = path.join(tmp.dir, `${name}.db`);
  const key = cli(['--db', db, 'keys', 'create', '--name', name]).stdout.trim();
  const { reader, writeFd } = await logPipe();
  const server = runOnPipe(writeFd, ['--db', db, 'serve', '--port', '0']);
  await reader.waitFor(/"url":"http:\/\/[^"]+"/);
  const url = /"url":"(http:\/\/[^"]+)"/.exec(reader.output())![1]!;
  return { db, key, reader, server, url };
}

/** Fails the test, instead of hanging it, when the process outlives its deadline; then kills it. */
async function exitWithin(process: { child: ChildProcess; exited: Promise<{ code: number | null; afterMs: () => number }> }, ms: number) {
  const timer = setTimeout(() => process.child.kill('SIGKILL'), ms);
  const result = await process.exited;
  clearTimeout(timer);
  return { code: result.code, afterMs: result.afterMs() };
}

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match![1]) * 1024;
}

async function requests(url: string, count: number, pathFor: (i: number) => string, concurrency = 16): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const res = await fetch(`${url}${pathFor(i)}`);
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    }),
  );
  return statuses;
}

describe('when the log reader dies', () => {
  test('a SIGTERM right after it died still ends the process, exit 0 within the shutdown timeout', async () => {
    // Nothing is logged between the reader's death and the signal: the case that used to hang.
    for (let round = 0; round < 4; round += 1) {
      const { reader, server } = await serveOnPipe(`dead-at-once-${round}`);
      await reader.kill();

      server.child.kill('SIGTERM');
      const exit = await exitWithin(server, SHUTDOWN_MS + MARGIN_MS);

      expect(exit).toEqual({ code: 0, afterMs: expect.any(Number) });
      expect(exit.afterMs).toBeLessThan(SHUTDOWN_MS + MARGIN_MS);
    }
  }, 60_000);

  test('the server keeps answering, and a SIGTERM ends it with exit 0 within the shutdown timeout', async () => {
    const { key, reader, server, url } = await serveOnPipe('dead');
    await reader.kill();

    const answered = await requests(url, 500, (i) => (i % 2 ? '/healthz' : '/v1/store/orders'));
    const list = await fetch(`${url}/v1/store/orders`, { headers: { Authorization: `Bearer ${key}` } });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    server.child.kill('SIGTERM');
    const exit = await exitWithin(server, SHUTDOWN_MS + MARGIN_MS);

    expect(Object.fromEntries(answered)).toEqual({ 200: 250, 401: 250 });
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual([]);
    // Every line after the failure is counted as dropped because the destination failed.
    expect(Number(/petstore_log_lines_dropped_total\{reason="failed"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(500);
    expect(exit.code).toBe(0);
    expect(exit.afterMs).toBeLessThan(SHUTDOWN_MS + MARGIN_MS);
  }, 60_000);
});

describe('when the log reader is alive but stops reading', () => {
  test('requests are answered, memory stays bounded, drops are counted and reported, and SIGTERM still ends it', async () => {
    const { reader, server, url } = await serveOnPipe('stalled');
    reader.child.kill('SIGUSR2');
    // Lines of about 8 KB each (the request path is logged): 20,000 of them are 160 MB of log.
    const longPath = (i: number) => `/nowhere/${i}/${'x'.repeat(8000)}`;
    await requests(url, 200, longPath);
    const before = rssBytes(server.child.pid!);

    const answered = await requests(url, 20_000, longPath);
    const grown = rssBytes(server.child.pid!) - before;
    const health = await fetch(`${url}/healthz`);
    const metrics = await (await fetch(`${url}/metrics`)).text();

    expect(Object.fromEntries(answered)).toEqual({ 404: 20_000 });
    expect(health.status).toBe(200);
    expect(grown).toBeLessThan(64 * 1024 * 1024);
    const dropped = Number(/petstore_log_lines_dropped_total\{reason="full"\} (\d+)/.exec(metrics)?.[1]);
    expect(dropped).toBeGreaterThan(15_000);

    // Once the reader reads again, one line says how many lines were lost.
    reader.child.kill('SIGUSR2');
    await reader.waitFor('"msg":"log lines were dropped');
    const report = reader
      .output()
      .split('\n')
      .filter((line) => line.includes('"msg":"log lines were dropped'))
      .map((line) => JSON.parse(line) as { level: number; droppedLines: number });
    expect(report).toHaveLength(1);
    expect(report[0]).toMatchObject({ level: 40 });
    expect(report[0]!.droppedLines).toBeGreaterThanOrEqual(dropped);

    // Stalled again, with the pipe full: the signal still ends the process in time.
    reader.child.kill('SIGUSR2');
    await requests(url, 200, longPath);
    server.child.kill('SIGTERM');
    const exit = await exitWithin(server, SHUTDOWN_MS + MARGIN_MS);
    await reader.kill();

    expect(exit.code).toBe(0);
    expect(exit.afterMs).toBeLessThan(SHUTDOWN_MS + MARGIN_MS);
  }, 90_000);
});

describe('CLI commands whose output is gone', () => {
  const records = JSON.stringify([{ id: 1, petId: 1, quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false }]);

  test('orders import finishes its import and exits 0 instead of crashing', async () => {
    const db = path.join(tmp.dir, 'import-gone.db');
    const { reader, writeFd } = await logPipe();
    await reader.kill();

    const exit = await exitWithin(runOnPipe(writeFd, ['--db', db, 'orders', 'import', '-'], {}, records), 10_000);

    expect(exit.code).toBe(0);
    expect(rowsOf(db).map((row) => row.id)).toEqual([1]);
  });

  test('keys create exits 1 and revokes the key nobody could see', async () => {
    const db = path.join(tmp.dir, 'key-gone.db');
    const { reader, writeFd } = await logPipe();
    await reader.kill();

    const exit = await exitWithin(runOnPipe(writeFd, ['--db', db, 'keys', 'create', '--name', 'lost']), 10_000);
    const keys = cli(['--db', db, 'keys', 'list']).stdout.trim().split('\n');

    expect(exit.code).toBe(1);
    expect(keys).toHaveLength(2);
    expect(keys[1]).toMatch(/^lost\torders:read,orders:cancel\tdefault\t\S+\t-\t\S+Z\t-$/);
  });

  test('keys rotate exits 1 and leaves the key with the secret it had, when nobody could see the new one', async () => {
    const db = path.join(tmp.dir, 'rotation-gone.db');
    const key = cli(['--db', db, 'keys', 'create', '--name', 'kept']).stdout.trim();
    const hashes = (): unknown[] => {
      const file = new Database(db, { readonly: true });
      try {
        return file.prepare('SELECT key_hash, previous_hash FROM api_keys').all();
      } finally {
        file.close();
      }
    };
    const before = hashes();
    const { reader, writeFd } = await logPipe();
    await reader.kill();

    const exit = await exitWithin(runOnPipe(writeFd, ['--db', db, 'keys', 'rotate', 'kept']), 10_000);

    expect(exit.code).toBe(1);
    expect(hashes()).toEqual(before);
    expect(before).toEqual([{ key_hash: hashKey(key), previous_hash: null }]);
  });
});

describe('batched writes', () => {
  /**
   * A LogOutput on a real file, with every write it makes counted on the way through, and
   * `written()`, which resolves once no write is under way (each has called back).
   */
  function onFile(name: string) {
    const file = path.join(tmp.dir, name);
    const fd = fs.openSync(file, 'w');
    const write = fs.write as (...args: unknown[]) => void;
    let underWay = 0;
    const waiting: Array<() => void> = [];
    const writes = jest.spyOn(fs, 'write').mockImplementation((...args: unknown[]) => {
      const callback = args.pop() as (...results: unknown[]) => void;
      underWay += 1;
      write(...args, (...results: unknown[]) => {
        underWay -= 1;
        callback(...results);
        if (underWay === 0) for (const resolve of waiting.splice(0)) resolve();
      });
    });
    const output = new LogOutput({ fd });
    return {
      output,
      writes: () => writes.mock.calls.filter((call) => call[0] === fd).length,
      written: () => (underWay === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve))),
      lines: () => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean),
      close: () => (writes.mockRestore(), fs.closeSync(fd)),
    };
  }

  test('lines a few milliseconds apart share writes, and every line arrives once, in order', async () => {
    // The lines' clock moves only as the test moves it, a millisecond between lines, so that a
    // loaded machine cannot stretch the gaps past a line's wait; the writes to the file are real.
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    const log = onFile('spaced.log');
    try {
      for (let i = 0; i < 60; i += 1) {
        log.output.write(`{"line":${i}}\n`);
        jest.advanceTimersByTime(1);
        // A write that started is over before the next line, as it would be on an idle machine.
        await log.written();
      }
      await log.output.drain(1000);
    } finally {
      jest.useRealTimers();
    }

    expect(log.lines()).toEqual(Array.from({ length: 60 }, (_, i) => `{"line":${i}}`));
    // A write per line would be 60. A line waits 10 ms for others to share its write: ten lines a write.
    expect(log.writes()).toBe(6);
    log.close();
  });

  test('lines that come while a write is under way wait for their batch, not for its end', async () => {
    const log = onFile('busy.log');
    // A batch's worth of characters (16 KiB) is written at once, with no one draining.
    const first = `{"line":0,"pad":"${'x'.repeat(16 * 1024)}"}`;
    log.output.write(`${first}\n`);
    expect(log.writes()).toBe(1);
    // A busy server: lines on every turn of the loop while the first write is under way and after.
    const started = performance.now();
    for (let i = 1; i <= 40; i += 1) {
      log.output.write(`{"line":${i}}\n`);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const elapsed = performance.now() - started;
    // Written again as each write ended, they went a few at a time: a write per turn or two. Now
    // they wait for the batch's 10 ms: one write for each 10 ms that passed, and the first.
    expect(log.writes()).toBeLessThanOrEqual(2 + Math.floor(elapsed / 10));
    await log.output.drain(1000);
    expect(log.lines()).toEqual([first, ...Array.from({ length: 40 }, (_, i) => `{"line":${i + 1}}`)]);
    log.close();
  });

  test('a lone line is written after a short wait, and drain writes what waits at once', async () => {
    const log = onFile('lone.log');
    log.output.write('{"lone":true}\n');
    expect(log.writes()).toBe(0);
    await until(() => log.lines().length === 1, 'the lone line is in the file');
    expect(log.lines()).toEqual(['{"lone":true}']);
    expect(log.writes()).toBe(1);
    // With nothing queued, drain only waits for the lone line's write to finish.
    await log.output.drain(1000);

    log.output.write('{"last":true}\n');
    const before = log.writes();
    const drained = log.output.drain(1000);
    expect(log.writes()).toBe(before + 1);
    await drained;
    expect(log.lines()).toEqual(['{"lone":true}', '{"last":true}']);
    log.close();
  });

  test('a process that ends on its own still writes its last line', () => {
    const script = `
      const { LogOutput } = require(${JSON.stringify(path.join(ROOT, 'dist/src/log-output.js'))});
      new LogOutput({ fd: 1 }).write('the last line\\n');
    `;
    const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });

    expect(run.status).toBe(0);
    expect(run.stdout).toBe('the last line\n');
  });
});
