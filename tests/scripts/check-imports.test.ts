import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { copyProject, npmRun, npmRunWith, type FileEdit } from '../helpers/project';

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

/** Runs the check with each `line` added to the top of its `file`, then puts the files back. */
function checkWith(...edits: ReadonlyArray<readonly [file: string, line: string]>): { status: number | null; output: string } {
  return npmRunWith(
    dir,
    'check:imports',
    edits.map(([file, line]): FileEdit => [file, (text) => `${line}\n${text}`]),
  );
}

test('src/ as it is passes', () => {
  const check = npmRun(dir, 'check:imports');

  expect(check.output).toContain('no dependency violations found');
  expect(check.status).toBe(0);
});

// Each cycle alone: a cycle's report names every file on it, so two at once would name each other's files.
test.each([
  ['a module that imports the app back', 'src/contract/document.ts', "import '../app';", ['src/contract/document.ts', 'src/app.ts']],
  [
    'a type-only import that closes a cycle',
    'src/http/reply.ts',
    "import type { Writer } from './stream';",
    ['src/http/reply.ts', 'src/http/stream.ts'],
  ],
])('%s fails, naming the files of the cycle', (_case, file, line, files) => {
  const check = checkWith([file, line]);

  expect(check.status).not.toBe(0);
  expect(check.output).toContain('no-circular');
  for (const named of files) expect(check.output).toContain(named);
});

const LAYER_BREAKS = [
  ['config.ts importing the store', 'src/config.ts', "import type { Store } from './store';", 'ground-floor-stays-down'],
  ['the OpenAPI adapter importing a contract rule', 'src/openapi/ajv.ts', "import '../contract/document';", 'openapi-below-contract'],
  ['the store importing an API error', 'src/store/core.ts', "import '../errors';", 'store-below-contract-and-http'],
  ['the request path importing an operation module', 'src/http/binding.ts', "import '../handlers/v1';", 'http-below-handlers'],
  ['the orders domain importing the request path', 'src/orders/read.ts', "import '../http/conditional';", 'domain-knows-no-http'],
  ['the keys domain importing the metrics', 'src/keys/bearer.ts', "import type { Metrics } from '../metrics';", 'domain-knows-no-http'],
] as const;

// Every layer break in one run of the check: each is reported on a line of its own, naming its rule and its file.
let layerCheck: { status: number | null; output: string } | undefined;
const checkLayerBreaks = (): { status: number | null; output: string } =>
  (layerCheck ??= checkWith(...LAYER_BREAKS.map(([, file, line]) => [file, line] as const)));

test.each(LAYER_BREAKS)('%s fails, naming the rule and the import', (_case, file, _line, rule) => {
  const check = checkLayerBreaks();

  expect(check.status).not.toBe(0);
  expect(check.output).toContain(`${rule}: ${file}`);
});
