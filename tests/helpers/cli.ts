import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/** The built bin, run with plain node, as operators run it. */
export const BIN = path.join(__dirname, '..', '..', 'dist', 'src', 'cli', 'main.js');

/**
 * The environment of a CLI run: nothing inherited that could pick another database, or change
 * what its messages suggest (scripts/with-node.sh's PETSTORE_NODE_LINE).
 */
export function cliEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { PETSTORE_DB: _db, PETSTORE_DATABASE_URL: _url, NODE_ENV: _env, PETSTORE_NODE_LINE: _line, ...rest } = process.env;
  return { ...rest, LOG_LEVEL: 'warn', ...extra };
}

/** Runs one CLI command to completion. */
export function cli(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string } = {},
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    env: cliEnv(options.env),
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: 20000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs one CLI command to completion without blocking the event loop, for a command that talks to a server in this process. */
export function cliAsync(
  args: string[],
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: cliEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * Through the built CLI, as an operator would: creates a key named `keyName` and imports pending
 * orders 1..count; returns the key.
 */
export function seedWithCli(db: string, keyName: string, count: number): string {
  const key = cli(['--db', db, 'keys', 'create', '--name', keyName]).stdout.trim();
  const records = Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    petId: 1,
    quantity: 1,
    shipDate: '2026-12-01T10:00:00Z',
    complete: false,
  }));
  const imported = cli(['--db', db, 'orders', 'import', '-'], { input: JSON.stringify(records) });
  if (imported.status !== 0) throw new Error(`the import of ${count} orders failed: ${imported.stderr}`);
  return key;
}

/** A `serve` process, its URL once it listens, and everything it printed. */
export interface Served {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  /** Resolves once the process has printed `pattern` on stdout or stderr; rejects if it exits first. */
  printed: (pattern: string | RegExp, stream?: 'stdout' | 'stderr') => Promise<void>;
}

/** Resolves once `text()` matches `pattern`, checked on every chunk `source` emits; rejects if `child` exits first. */
function whenPrinted(child: ChildProcess, source: NodeJS.ReadableStream, text: () => string, pattern: string | RegExp): Promise<void> {
  const matches = (): boolean => (typeof pattern === 'string' ? text().includes(pattern) : pattern.test(text()));
  if (matches()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!matches()) return;
      source.off('data', check);
      child.off('exit', exited);
      resolve();
    };
    const exited = (): void => {
      source.off('data', check);
      if (matches()) resolve();
      else reject(new Error(`the process exited before printing ${String(pattern)}:\n${text()}`));
    };
    source.on('data', check);
    child.once('exit', exited);
  });
}

/**
 * Starts `serve` on an ephemeral port, with `--db` and extra serve flags, and waits until it listens;
 * `bin` is another build of the CLI (a copy of the project's).
 */
export async function serve(db: string, flags: string[] = [], env: NodeJS.ProcessEnv = {}, bin = BIN): Promise<Served> {
  const child = spawn(process.execPath, [bin, '--db', db, 'serve', '--port', '0', ...flags], {
    env: cliEnv({ LOG_LEVEL: 'info', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${err}`)), 15000);
    const check = (): void => {
      const match = /"url":"(http:\/\/[^"]+)"/.exec(err);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stderr.on('data', check);
    child.on('exit', () => reject(new Error(`serve exited: ${err}`)));
  });
  return {
    child,
    url,
    stdout: () => out,
    stderr: () => err,
    exited,
    printed: (pattern, stream = 'stderr') =>
      stream === 'stdout' ? whenPrinted(child, child.stdout, () => out, pattern) : whenPrinted(child, child.stderr, () => err, pattern),
  };
}
