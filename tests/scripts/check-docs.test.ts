import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { copyProject, npmRun, npmRunWith, type FileEdit } from '../helpers/project';

// `npm run check:docs` (part of `npm run check`) on a copy of the project: links, headings,
// back-quoted paths and the Layout cannot drift from what is there.
//
// The breakages share one copy and as few runs as tell them apart: the links are remark's, and
// remark failing stops the check before the script that checks paths and the Layout, so each
// kind has a run of its own, and each case reads its own error in it.
let dir: string;

beforeAll(() => {
  dir = copyProject(fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-docs-')));
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs the check with each of `edits` made to the copy, then undoes them. */
const checkWith = (...edits: FileEdit[]): { status: number | null; output: string } => npmRunWith(dir, 'check:docs', edits);

test('the documents as they are pass', () => {
  const check = npmRun(dir, 'check:docs');

  expect(check.output).toContain('every back-quoted path in');
  expect(check.status).toBe(0);
});

describe('broken links fail, each named', () => {
  let check: { status: number | null; output: string };
  beforeAll(() => {
    check = checkWith(
      ['docs/operations.md', (text) => `${text}\nSee [the runbook](runbook.md).\n`],
      ['README.md', (text) => text.replace('(docs/operations.md#environment)', '(docs/operations.md#environment-variables)')],
    );
  });

  test('the check fails', () => expect(check.status).not.toBe(0));
  test('a link to a missing file, naming it', () => {
    expect(check.output).toMatch(/docs\/operations\.md[\s\S]*Cannot find file `(docs\/)?runbook\.md`/);
  });
  test('a link to a missing heading, naming it', () => {
    expect(check.output).toContain('Cannot find heading for `#environment-variables`');
  });
});

describe('paths that do not exist fail, each named', () => {
  let check: { status: number | null; output: string };
  beforeAll(() => {
    check = checkWith(
      ['docs/ci.md', (text) => `${text}\nThe helpers are in \`tests/helpers/gone.ts\`.\n`],
      ['src/store/cache.ts', () => 'export {};\n'],
    );
  });

  test('the check fails', () => expect(check.status).toBe(1));
  test('a back-quoted path that does not exist, naming the document and line', () => {
    expect(check.output).toMatch(/docs\/ci\.md:\d+: `tests\/helpers\/gone\.ts` does not exist/);
  });
  test('a file of src/store that the Layout does not name', () => {
    expect(check.output).toContain('the Layout does not name src/store/cache.ts');
  });
});
