import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { copyProject, npmRun } from '../helpers/project';

// `npm run check:imports` (part of `npm run check`) on a copy of the project: no module of src/
// imports, directly or through others, a module that imports it, type-only imports included, and
// no arrow runs up a layer.
let dir: string;

beforeAll(() => {
  dir = copyProject(fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-imports-')));
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs the check with `line` added to the top of `file`, then puts the file back. */
function checkWith(file: string, line: string): { status: number | null; output: string } {
  const at = path.join(dir, file);
  const original = fs.readFileSync(at, 'utf8');
  fs.writeFileSync(at, `${line}\n${original}`);
  try {
    return npmRun(dir, 'check:imports');
  } finally {
    fs.writeFileSync(at, original);
  }
}

test('src/ as it is passes', () => {
  const check = npmRun(dir, 'check:imports');

  expect(check.output).toContain('no dependency violations found');
  expect(check.status).toBe(0);
});

test.each([
  ['a module that imports the app back', 'src/contract/document.ts', "import '../app';", ['src/contract/document.ts', 'src/app.ts']],
  [
    'a type-only import that closes a cycle',
    'src/http/reply.ts',
    "import type { Writer } from './stream';",
    ['src/http/reply.ts', 'src/http/stream.ts'],
  ],
])('%s fails, naming the files of the cycle', (_case, file, line, files) => {
  const check = checkWith(file, line);

  expect(check.status).not.toBe(0);
  expect(check.output).toContain('no-circular');
  for (const named of files) expect(check.output).toContain(named);
});

test.each([
  ['config.ts importing the store', 'src/config.ts', "import type { Store } from './store';", 'ground-floor-stays-down'],
  ['the OpenAPI adapter importing a contract rule', 'src/openapi/ajv.ts', "import '../contract/document';", 'openapi-below-contract'],
  ['the store importing an API error', 'src/store/core.ts', "import '../errors';", 'store-below-contract-and-http'],
  ['the request path importing an operation module', 'src/http/binding.ts', "import '../handlers/v1';", 'http-below-handlers'],
  ['the orders domain importing the request path', 'src/orders/read.ts', "import '../http/conditional';", 'domain-knows-no-http'],
  ['the keys domain importing the metrics', 'src/keys/bearer.ts', "import type { Metrics } from '../metrics';", 'domain-knows-no-http'],
])('%s fails, naming the rule and the import', (_case, file, line, rule) => {
  const check = checkWith(file, line);

  expect(check.status).not.toBe(0);
  expect(check.output).toContain(`${rule}: ${file}`);
});
