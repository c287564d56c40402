import fs from 'node:fs';
import path from 'node:path';
import { createApp } from '../../src/app';
import { createContractChecker } from '../../src/contract/conformance';
import { loadDocument } from '../../src/contract/document';
import { openSqliteStore, type Store } from '../../src/store';
import { listen, scaffoldedHandlers } from '../helpers/app';
import { cli } from '../helpers/cli';
import { addOrderNote, addToDocument } from '../helpers/notes-operation';
import { npmRun, projectForFile } from '../helpers/project';

// A spec author adds an operation with a path parameter, a query parameter and a JSON body, and
// declares only what it answers itself and the 503 of a busy server or a spent rate limit: 201,
// 400, 401 and 503. The statuses the server makes before the handler runs (a wrong media type, a
// body that does not parse or breaks the schema, no key, a key without its scope or over its limit)
// must all come back as what the operation declares, never as a 500.
//
// The document is edited and scaffolded on a copy of the project, as the author would; the server
// is the app on that document with the handler the scaffold writes (answering its mock), in this
// process: tests/scripts/growing-the-contract.test.ts generates, builds and serves such a copy.
const { tmpDir, dir } = projectForFile();
const tmp = { dir: tmpDir };
const spec = path.join(dir, 'spec', 'openapi-v2.yaml');

const NEW_OPERATION = addOrderNote(`        '201':
          description: The note as stored.
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Note'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/Unauthorized'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
`);

/** The app on the copy's v2 document as it is now, with the scaffolded handler, on `store`. */
const appOn = (store: Store) => ({
  store,
  versions: { v2: { document: loadDocument(spec), modules: scaffoldedHandlers('v2', 'addOrderNote') } },
});

let scaffolded: { status: number | null; output: string };
let server: Awaited<ReturnType<typeof listen>>;
let store: Store;
let key: string;
const db = path.join(tmp.dir, 'notes.db');

beforeAll(async () => {
  addToDocument(spec, NEW_OPERATION);
  scaffolded = npmRun(dir, 'scaffold');
  key = cli(['--db', db, 'keys', 'create', '--name', 'author']).stdout.trim();
  store = openSqliteStore(db);
  server = await listen(appOn(store));
}, 120000);

afterAll(async () => {
  await server?.close();
  await store?.close();
});

/** POSTs to the new operation and returns the reply, with what the contract says of it. */
async function post(headers: Record<string, string>, body: string): Promise<{ status: number; body: unknown; problem: string | null }> {
  const res = await fetch(`${server.url}/v2/store/orders/7/notes?priority=2`, { method: 'POST', headers, body });
  const reply = { status: res.status, headers: Object.fromEntries(res.headers), body: await res.json() };
  const checker = await createContractChecker(loadDocument(spec));
  return { status: reply.status, body: reply.body, problem: checker.problem('addOrderNote', reply) };
}

test('scaffold asks for no more responses: 415 and 413 are answered as the declared 400', () => {
  expect(scaffolded.status).toBe(0);
  expect(scaffolded.output).not.toContain('declare it');
});

test.each([
  [
    'a wrong content type',
    () => ({ Authorization: `Bearer ${key}`, 'Content-Type': 'text/plain' }),
    'likes the blue ball',
    'The request body must be application/json',
  ],
  [
    'malformed JSON',
    () => ({ Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }),
    '{"text": ',
    'The request body is not valid JSON',
  ],
  [
    'a body that breaks the schema',
    () => ({ Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }),
    '{"text": "x", "colour": "blue"}',
    'body.colour is not a known field',
  ],
])(
  '%s gets the declared 400 Error, never a 500',
  async (_case, headers, body, message) => {
    const reply = await post(headers(), body);

    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ code: 'invalid_request', message, status: 400 });
    expect(reply.problem).toBeNull();
  },
  30000,
);

test('no key gets the declared 401 Error', async () => {
  const reply = await post({ 'Content-Type': 'application/json' }, '{"text": "x"}');

  expect(reply.status).toBe(401);
  expect(reply.body).toEqual({ code: 'unauthorized', message: 'A valid API key is required', status: 401 });
  expect(reply.problem).toBeNull();
}, 30000);

test('a key without its scope gets the declared 401; one over its rate limit the declared 503, with Retry-After', async () => {
  const db = path.join(tmp.dir, 'notes.db');
  const writer = cli(['--db', db, 'keys', 'create', '--name', 'canceller', '--scopes', 'orders:cancel']).stdout.trim();
  const limited = cli(['--db', db, 'keys', 'create', '--name', 'limited', '--rate-limit', '1/day']).stdout.trim();
  const json = { 'Content-Type': 'application/json' };

  const unscoped = await post({ ...json, Authorization: `Bearer ${writer}` }, '{"text": "x"}');
  await post({ ...json, Authorization: `Bearer ${limited}` }, '{"text": "x"}');
  const spent = await post({ ...json, Authorization: `Bearer ${limited}` }, '{"text": "x"}');

  expect(unscoped.status).toBe(401);
  expect(unscoped.body).toEqual({ code: 'unauthorized', message: 'The API key lacks the scope orders:read', status: 401 });
  expect(unscoped.problem).toBeNull();
  expect(spent.status).toBe(503);
  expect(spent.body).toEqual({ code: 'service_unavailable', message: "The API key's rate limit has been reached", status: 503 });
  expect(spent.problem).toBeNull();
}, 30000);

test('without its 503, npm run check names the 429 of a spent rate limit', () => {
  const declared = fs.readFileSync(spec, 'utf8');
  const without503 = declared.replace(
    /(operationId: addOrderNote[\s\S]*?)        '503':\n {10}\$ref: '#\/components\/responses\/ServiceUnavailable'\n/,
    '$1',
  );
  expect(without503).not.toBe(declared);
  fs.writeFileSync(spec, without503);
  try {
    const check = npmRun(dir, 'check:documents');

    expect(check.status).not.toBe(0);
    expect(check.output).toContain(
      "spec/openapi-v2.yaml: addOrderNote can answer 429 (it is secured: a key over its rate limit (or 503, v1's and v2's answer)) but does not declare it: add a '429' response",
    );
  } finally {
    fs.writeFileSync(spec, declared);
  }
}, 60000);

test('without its 400, npm run check fails naming the operation and the status, and the server will not start, in the same words', async () => {
  const declared = fs.readFileSync(spec, 'utf8');
  const without400 = declared.replace(
    /(operationId: addOrderNote[\s\S]*?)        '400':\n {10}\$ref: '#\/components\/responses\/BadRequest'\n/,
    '$1',
  );
  expect(without400).not.toBe(declared);
  fs.writeFileSync(spec, without400);
  try {
    const check = npmRun(dir, 'check');
    const line =
      "addOrderNote can answer 400 (it takes a request body: malformed or invalid) but does not declare it: add a '400' response";

    expect(check.status).not.toBe(0);
    expect(check.output).toContain(`spec/openapi-v2.yaml: ${line}`);
    const refused = await createApp(appOn(store)).then(
      () => 'it started',
      (err: unknown) => String(err),
    );
    expect(refused).toContain(line);
  } finally {
    fs.writeFileSync(spec, declared);
  }
}, 120000);
