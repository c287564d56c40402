import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { copyProject } from '../helpers/project';
import { tempDir } from '../helpers/temp-dir';

// `npm run dev` on a copy of the project: a spec edit reaches the served document without a manual
// restart, and a change that does not compile leaves the last good server answering.
const tmp = tempDir();
const dir = copyProject(path.join(tmp.dir, 'project'));
const spec = path.join(dir, 'spec', 'openapi.yaml');
let dev: ChildProcess | undefined;
let output = '';

afterAll(async () => {
  if (dev?.pid !== undefined && dev.exitCode === null) {
    const exited = new Promise((resolve) => dev!.once('exit', resolve));
    process.kill(-dev.pid, 'SIGTERM');
    await exited;
  }
  tmp.cleanup();
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once dev has printed `pattern` `times` times in all; rejects, with what it printed, if it exits or two minutes pass first. */
function printed(pattern: RegExp, times = 1): Promise<void> {
  const count = (): number => output.match(new RegExp(pattern.source, 'g'))?.length ?? 0;
  return new Promise((resolve, reject) => {
    const stop = (): void => {
      clearTimeout(timer);
      dev!.stderr!.off('data', check);
      dev!.off('exit', exited);
    };
    const check = (): void => {
      if (count() < times) return;
      stop();
      resolve();
    };
    const exited = (): void => {
      stop();
      reject(new Error(`dev exited before printing ${String(pattern)}:\n${output}`));
    };
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`dev did not print ${String(pattern)} ${times} times within two minutes:\n${output}`));
    }, 120000);
    dev!.stderr!.on('data', check);
    dev!.once('exit', exited);
    check();
  });
}

async function description(url: string): Promise<string> {
  const res = await fetch(`${url}/v1/openapi.json`);
  return ((await res.json()) as { info: { description: string } }).info.description;
}

test('a spec edit is served without a restart; a change that does not compile or start keeps the last good server', async () => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  dev = spawn('npm', ['run', '--silent', 'dev', '--', '--port', String(port)], {
    cwd: dir,
    env: { ...process.env, PETSTORE_DB: path.join(tmp.dir, 'dev.db'), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  dev.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await printed(/dev: serving build \d+ at/);
  await printed(/dev: watching src\/ and spec\//);
  expect(await description(url)).toMatch(/^The store-orders part of the petstore API/);

  const edited = fs
    .readFileSync(spec, 'utf8')
    .replace('The store-orders part of the petstore API', 'The edited store-orders API')
    .replace('summary: List every order', 'summary: List all the orders');
  fs.writeFileSync(spec, edited);
  await printed(/dev: serving build \d+ at/, 2);

  expect(await description(url)).toMatch(/^The edited store-orders API/);
  expect(fs.readFileSync(path.join(dir, 'generated', 'openapi.ts'), 'utf8')).toContain('List all the orders');

  const ids = path.join(dir, 'src', 'ids.ts');
  const source = fs.readFileSync(ids, 'utf8');
  fs.writeFileSync(ids, `${source}\nexport const broken: number = 'not a number';\n`);
  await printed(/the change does not compile; the last good server keeps running/);

  expect(output).toContain('src/ids.ts(');
  expect(await description(url)).toMatch(/^The edited store-orders API/);

  fs.writeFileSync(ids, source);
  await printed(/dev: serving build \d+ at/, 3);

  expect((await fetch(`${url}/healthz`)).status).toBe(200);

  // It compiles, but the server refuses the document at start-up: the last good build comes back.
  fs.writeFileSync(spec, edited.replace(/^ +x-deprecated-at: .*\n/m, ''));
  await printed(/the new server did not start; the last good one is back at/);

  expect(output).toContain('is deprecated but has no x-deprecated-at date');
  expect(await description(url)).toMatch(/^The edited store-orders API/);
}, 480000);
