import fs from 'node:fs';
import path from 'node:path';
import { cliEnv, serve, type Served } from './helpers/cli';
import { ROOT } from './helpers/project';
import { runShellExamples, shellExamples, type ExampleRun } from './helpers/shell-examples';
import { tempDir } from './helpers/temp-dir';

// The README's shell examples, run as a reader runs them: in order, in one shell, against a fresh
// demo server (`npm start` is `serve --demo`), with the key it printed pasted in place of `pso_…`.
// Each must exit 0 and print what the README shows beside it (`# → …`).
const tmp = tempDir();
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

let server: Served;
let key: string;
let db: string;
beforeAll(async () => {
  db = path.join(tmp.dir, 'data', 'petstore.db');
  server = await serve(db, ['--demo']);
  await server.printed('API reference', 'stdout');
  key = /Demo API key.*: (pso_\S+)/.exec(server.stdout())![1]!;
});
afterAll(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  tmp.cleanup();
});

/** Runs examples as the README's reader does: the demo server's address and key where the README shows the default ones. */
function run(markdown: string, scratch: string): Promise<ExampleRun[]> {
  const dir = path.join(tmp.dir, scratch);
  fs.mkdirSync(dir, { recursive: true });
  return runShellExamples(shellExamples(markdown), {
    cwd: ROOT,
    // The CLI's commands use the server's store, as `bin/petstore-orders` uses ./data/ beside `npm start`.
    env: cliEnv({ PETSTORE_DB: db }),
    dir,
    rewrite: (code) => code.replaceAll('pso_…', key).replaceAll('http://127.0.0.1:8080', server.url),
  });
}

/** A failed example, told with its place in the README and what it printed. */
const failure = ({ example, status, output, missing }: ExampleRun): string =>
  `README.md:${example.line}: ${status === null ? 'the shell ended in it' : `exit status ${status}`}${
    missing === undefined ? '' : `; its output lacks "${missing}"`
  }\n${output}`;

test('every shell example of the README runs, in order, and prints what the README shows', async () => {
  const examples = shellExamples(README);
  const runs = await run(README, 'readme');

  // Every example runs unless it says why not; those are the exception.
  const skipped = examples.filter((example) => example.notRun !== undefined);
  expect(skipped.every((example) => example.notRun!.length > 10)).toBe(true);
  expect(skipped.length).toBeLessThanOrEqual(2);
  expect(runs.filter((each) => each.status !== 0 || each.missing !== undefined).map(failure)).toEqual([]);
  expect(runs.length).toBe(examples.length - skipped.length);
  // The v3.1 examples placed an order and shipped it, with the demo key.
  expect(runs.some((each) => each.output.includes('HTTP/1.1 201 Created'))).toBe(true);
});

test.each([
  ['an undefined variable', 'curl -s "$BAS/healthz"', 'the shell ended in it'],
  [
    'a status that no longer matches',
    'curl -si "http://127.0.0.1:8080/healthz"\n# → HTTP/1.1 404 Not Found',
    'lacks "HTTP/1.1 404 Not Found"',
  ],
  ['a failing command', 'bin/petstore-orders keys revoke nobody', 'the shell ended in it'],
])('an example with %s fails the check, naming its line', async (_case, code, said) => {
  const runs = await run(`# A page\n\n\`\`\`sh\n${code}\n\`\`\`\n`, `broken-${code.length}`);

  expect(runs).toHaveLength(1);
  expect(failure(runs[0]!)).toContain('README.md:3: ');
  expect(failure(runs[0]!)).toContain(said);
});
