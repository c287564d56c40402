import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { createContractChecker } from '../../src/contract/conformance';
import { loadDocument } from '../../src/contract/document';
import { asOpenApi31 } from '../../src/openapi';
import { cli, serve } from '../helpers/cli';
import { addOrderNote, addToDocument } from '../helpers/notes-operation';
import { npmRun, npxRun, projectForFile, snapshot, tscErrors } from '../helpers/project';

// A spec author's day, on a copy of the project, as docs/spec-authors.md walks through it: add an
// operation with a path parameter, a query parameter and a JSON body to the v2 document; add a
// major version (v9, in OpenAPI 3.1) as a document and its line in spec/documents.json; then
// `npm run generate` and `npm run scaffold`, and nothing in src/ by hand. Both are in one copy, so
// that one build and one typecheck of it prove both.
const { tmpDir, dir, servers } = projectForFile();
const tmp = { dir: tmpDir };
const spec = path.join(dir, 'spec', 'openapi-v2.yaml');
const handlerModule = path.join(dir, 'src', 'handlers', 'v2', 'add-order-note.ts');

const NEW_OPERATION = addOrderNote(`        '201':
          description: The note as stored.
          headers:
            Location:
              required: true
              schema:
                type: string
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Note'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
`);

/** Adds v9 to the copy: v2's contract in OpenAPI 3.1's idioms, as most new APIs are written, and its line in spec/documents.json. */
function addMajorVersion(): void {
  const v2 = asOpenApi31(loadDocument(path.join(dir, 'spec', 'openapi-v2.yaml')));
  fs.writeFileSync(path.join(dir, 'spec', 'openapi-v9.yaml'), stringify({ ...v2, info: { ...v2.info, version: '9.0.0' } }));
  const list = path.join(dir, 'spec', 'documents.json');
  const documents = JSON.parse(fs.readFileSync(list, 'utf8')) as unknown[];
  documents.push({ version: 'v9', document: 'spec/openapi-v9.yaml', types: 'generated/openapi-v9.ts' });
  fs.writeFileSync(list, `${JSON.stringify(documents, null, 2)}\n`);
}

let scaffolded: { status: number | null; output: string };
/** src/ before the scaffold, and after it. */
let srcBefore: Map<string, string>;
let srcAfter: Map<string, string>;

beforeAll(() => {
  srcBefore = snapshot(dir, ['src']);
  addMajorVersion();
  addToDocument(spec, NEW_OPERATION);
  expect(npmRun(dir, 'generate').status).toBe(0);
  scaffolded = npmRun(dir, 'scaffold');
  srcAfter = snapshot(dir, ['src']);
}, 60000);

/** Builds the copy, serves it on a fresh store with a key: the server's URL and the key. */
async function buildAndServe(): Promise<{ url: string; key: string }> {
  const build = npmRun(dir, 'build');
  expect(build).toEqual({ status: 0, output: '' });
  const db = path.join(tmp.dir, `notes-${servers.length}.db`);
  const key = cli(['--db', db, 'keys', 'create', '--name', 'author']).stdout.trim();
  const server = await serve(db, [], {}, path.join(dir, 'dist', 'src', 'cli', 'main.js'));
  servers.push(server);
  return { url: server.url, key };
}

/** POSTs a note for order 7 at priority 2. */
function postNote({ url, key }: { url: string; key: string }): Promise<Response> {
  return fetch(`${url}/v2/store/orders/7/notes?priority=2`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ text: 'likes the blue ball' }),
  });
}

/** The server built from the scaffolded copy, once the first test that needs it has made it. */
let scaffoldedServer: Promise<{ url: string; key: string }> | undefined;
const servedScaffold = (): Promise<{ url: string; key: string }> => (scaffoldedServer ??= buildAndServe());

test('scaffold writes a handler module and a test for the new operation, and rewrites the index', () => {
  expect(scaffolded.status).toBe(0);
  const lines = scaffolded.output.split('\n');
  expect(lines.filter((line) => line.includes('/v2/'))).toEqual([
    'wrote src/handlers/v2/add-order-note.ts (answers a mock until implemented)',
    'wrote tests/handlers/v2/add-order-note.test.ts',
    'wrote src/handlers/v2/index.ts',
  ]);
  expect(fs.readFileSync(handlerModule, 'utf8')).toContain(
    "export const addOrderNote = defineHandler('v2', 'addOrderNote', ({ mock }) => mock);",
  );
});

test('for the new major version, scaffold writes its handlers and adds it to the list of versions; nothing else in src/ changed', () => {
  expect(scaffolded.output).toContain('wrote src/handlers/v9/index.ts');
  expect(scaffolded.output).toContain('wrote src/handlers/index.ts');
  expect(fs.readFileSync(path.join(dir, 'generated', 'versions.ts'), 'utf8')).toContain('v9: v9;');
  const changed = [...srcAfter.keys()].filter((file) => srcBefore.get(file) !== srcAfter.get(file));
  const scaffoldWrites = (file: string): boolean =>
    [
      path.join('src', 'handlers', 'index.ts'),
      path.join('src', 'handlers', 'v2', 'index.ts'),
      path.join('src', 'handlers', 'v2', 'add-order-note.ts'),
    ].includes(file) || file.startsWith(path.join('src', 'handlers', 'v9'));
  expect(changed.filter((file) => !scaffoldWrites(file))).toEqual([]);
  expect(changed.filter((file) => file.startsWith(path.join('src', 'handlers', 'v9'))).length).toBeGreaterThan(1);
  expect(npmRun(dir, 'check:documents').status).toBe(0);
});

test('a second scaffold changes nothing', () => {
  const before = snapshot(dir, ['src', 'tests', 'generated']);

  const again = npmRun(dir, 'scaffold');

  expect(again).toEqual({ status: 0, output: 'nothing to scaffold: every operation has a handler module\n' });
  expect(snapshot(dir, ['src', 'tests', 'generated'])).toEqual(before);
});

/** The files the scaffold wrote or rewrote, as it names them. */
const SCAFFOLDED = ['src/handlers/v2/add-order-note.ts', 'tests/handlers/v2/add-order-note.test.ts', 'src/handlers/v2/index.ts'];

// `npm run check` on the copy, but for the parts a scaffold cannot change: the project's own run
// of it (CI's) lints and formats every file the scaffold leaves alone, and the documents, the
// casts and the docs are the project's. Here: the files it wrote are linted and laid out, the
// generated files match the document, the imports keep their rules, and (below, with the wrong
// handlers) the whole copy typechecks.
test('what the scaffold wrote passes npm run check: lint, format, imports, and generated files that match the document', () => {
  const lint = npxRun(dir, 'eslint', ...SCAFFOLDED);
  const format = npxRun(dir, 'prettier', '--check', ...SCAFFOLDED);
  const generated = npmRun(dir, 'check:generated');
  const imports = npmRun(dir, 'check:imports');

  expect(lint).toEqual({ status: 0, output: '' });
  expect(format.status).toBe(0);
  expect(generated.output).toContain('every operation has a handler module, and the index lists them');
  expect(generated.status).toBe(0);
  expect(imports.status).toBe(0);
}, 180000);

test('the built server answers the new operation with a mock the contract allows, marked X-Mock', async () => {
  const res = await postNote(await servedScaffold());

  expect(res.status).toBe(201);
  expect(res.headers.get('x-mock')).toBe('true');
  const checker = await createContractChecker(loadDocument(spec));
  const reply = { status: res.status, headers: Object.fromEntries(res.headers), body: await res.json() };
  expect(checker.problem('addOrderNote', reply)).toBeNull();
}, 60000);

test('the new major version answers its mocks under its prefix, its document as written, and its statuses before a handler', async () => {
  const { url, key } = await servedScaffold();
  const list = await fetch(`${url}/v9/store/orders`, { headers: { Authorization: `Bearer ${key}` } });
  const document = await fetch(`${url}/v9/openapi.json`);
  const refused = await fetch(`${url}/v9/store/orders`);
  const tooMany = await fetch(`${url}/v9/store/orders?limit=1001`, { headers: { Authorization: `Bearer ${key}` } });

  expect(list.status).toBe(200);
  expect(list.headers.get('x-mock')).toBe('true');
  expect(document.status).toBe(200);
  expect(await document.json()).toMatchObject({ openapi: '3.1.0', info: { version: '9.0.0' } });
  expect(refused.status).toBe(401);
  expect(tooMany.status).toBe(400);
}, 60000);

test('the scaffolded test passes against the mock', () => {
  const run = npxRun(dir, 'jest', 'tests/handlers/v2/add-order-note.test.ts');

  expect(run.output).toMatch(/Tests: +\d+ passed/);
  expect(run.status).toBe(0);
}, 120000);

/** Handlers that break the document's types, each in a module of its own, with the error tsc must give it. */
const WRONG_HANDLERS = [
  [
    'reads a query parameter the document does not declare',
    "async ({ query }) => ({ status: 201, headers: { Location: '/x' }, body: { text: String(query.colour) } })",
    "Property 'colour' does not exist",
  ],
  [
    'leaves out the Location header the document requires',
    "async () => ({ status: 201, body: { text: 'x' } })",
    "Property 'headers' is missing",
  ],
  ['returns a status the document does not declare', "async () => ({ status: 200, body: { text: 'x' } })", "Type '200' is not assignable"],
  [
    'treats the numeric orderId as a string',
    "async ({ path }) => ({ status: 201, headers: { Location: path.orderId.toUpperCase() }, body: { text: 'x' } })",
    "Property 'toUpperCase' does not exist",
  ],
] as const;

/**
 * The typecheck of the copy with every wrong handler beside the scaffolded module, each in a module
 * of its own: one run of tsc shows the copy typechecks (no error outside them) and each fails.
 */
let wrongTypecheck: { status: number | null; output: string } | undefined;
function typecheckWrongHandlers(): { status: number | null; output: string } {
  if (wrongTypecheck !== undefined) return wrongTypecheck;
  const original = fs.readFileSync(handlerModule, 'utf8');
  const modules = WRONG_HANDLERS.map((_, i) => path.join(path.dirname(handlerModule), `wrong-handler-${i}.ts`));
  WRONG_HANDLERS.forEach(([, handler], i) => fs.writeFileSync(modules[i]!, original.replace('({ mock }) => mock', `() => ${handler}`)));
  try {
    wrongTypecheck = npmRun(dir, 'typecheck');
  } finally {
    for (const module of modules) fs.rmSync(module);
  }
  return wrongTypecheck;
}

test('the copy typechecks with the scaffolded handlers and the new version: tsc finds errors in the wrong handlers alone', () => {
  const typecheck = typecheckWrongHandlers();

  const errors = tscErrors(typecheck.output).filter((entry) => entry.trim() !== '');
  expect(errors.length).toBeGreaterThanOrEqual(WRONG_HANDLERS.length);
  expect(errors.filter((entry) => !/^src\/handlers\/v2\/wrong-handler-\d\.ts\(/.test(entry))).toEqual([]);
}, 60000);

test.each(WRONG_HANDLERS.map(([wrong, , error], i) => [wrong, `wrong-handler-${i}.ts`, error]))(
  'a handler that %s fails the typecheck',
  (_case, file, error) => {
    const typecheck = typecheckWrongHandlers();

    expect(typecheck.status).not.toBe(0);
    const errors = tscErrors(typecheck.output).filter((entry) => entry.includes(file));
    expect(errors.join('\n')).toContain(error);
  },
  60000,
);

test('once implemented, the handler gets its inputs typed and converted, and the mock is gone', async () => {
  const original = fs.readFileSync(handlerModule, 'utf8');
  fs.writeFileSync(
    handlerModule,
    original.replace(
      '({ mock }) => mock',
      '() => async ({ path, query, body }) => ({ status: 201, headers: { Location: `/v2/store/orders/${path.orderId + 1}/notes` }, body: { text: `${body.text} at ${query.priority.toFixed(1)}` } })',
    ),
  );

  const res = await postNote(await buildAndServe());

  expect(res.status).toBe(201);
  expect(res.headers.get('x-mock')).toBeNull();
  expect(res.headers.get('location')).toBe('/v2/store/orders/8/notes');
  expect(await res.json()).toEqual({ text: 'likes the blue ball at 2.0' });
}, 60000);
