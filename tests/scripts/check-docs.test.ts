import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { copyProject, npmRun } from '../helpers/project';

// `npm run check:docs` (part of `npm run check`) on a copy of the project: links, headings,
// back-quoted paths and the Layout cannot drift from what is there.
let dir: string;

beforeEach(() => {
  dir = copyProject(fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-docs-')));
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

const edit = (file: string, change: (text: string) => string): void => {
  const at = path.join(dir, file);
  fs.writeFileSync(at, change(fs.readFileSync(at, 'utf8')));
};

test('the documents as they are pass', () => {
  const check = npmRun(dir, 'check:docs');

  expect(check.output).toContain('every back-quoted path in');
  expect(check.status).toBe(0);
});

test('a link to a missing file fails, naming it', () => {
  edit('docs/operations.md', (text) => `${text}\nSee [the runbook](runbook.md).\n`);

  const check = npmRun(dir, 'check:docs');

  expect(check.status).not.toBe(0);
  expect(check.output).toMatch(/docs\/operations\.md[\s\S]*Cannot find file `(docs\/)?runbook\.md`/);
});

test('a link to a missing heading fails, naming it', () => {
  edit('README.md', (text) => text.replace('(docs/operations.md#environment)', '(docs/operations.md#environment-variables)'));

  const check = npmRun(dir, 'check:docs');

  expect(check.status).not.toBe(0);
  expect(check.output).toContain('Cannot find heading for `#environment-variables`');
});

test('a back-quoted path that does not exist fails, naming the document and line', () => {
  edit('docs/ci.md', (text) => `${text}\nThe helpers are in \`tests/helpers/gone.ts\`.\n`);

  const check = npmRun(dir, 'check:docs');

  expect(check.status).toBe(1);
  expect(check.output).toMatch(/docs\/ci\.md:\d+: `tests\/helpers\/gone\.ts` does not exist/);
});

test('a file of src/store that the Layout does not name fails', () => {
  fs.writeFileSync(path.join(dir, 'src/store/cache.ts'), 'export {};\n');

  const check = npmRun(dir, 'check:docs');

  expect(check.status).toBe(1);
  expect(check.output).toContain('the Layout does not name src/store/cache.ts');
});
