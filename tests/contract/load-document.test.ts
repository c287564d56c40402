import fs from 'node:fs';
import path from 'node:path';
import { createApp } from '../../src/app';
import {
  SPEC_PATH,
  buildParsedDocument,
  cloneDocument,
  loadDocument,
  parseDocumentText,
  parsedDocumentName,
  specPath,
} from '../../src/contract/document';
import { createOpenApi } from '../../src/openapi/adapter';
import { openSqliteStore } from '../../src/store';
import { ROOT } from '../helpers/project';
import { tempDir } from '../helpers/temp-dir';

// A document is parsed once while its file is unchanged, and shared frozen with what is built from
// it; an edit is read at the next load. An app's start checks the document it is given, however
// often that document is shared.
const tmp = tempDir();
afterAll(tmp.cleanup);

test('an unchanged file gives the same frozen document; an edited one gives the edit', () => {
  const file = path.join(tmp.dir, 'openapi.yaml');
  const text = fs.readFileSync(SPEC_PATH, 'utf8');
  fs.writeFileSync(file, text);

  const first = loadDocument(file);
  const again = loadDocument(file);
  fs.writeFileSync(file, text.replace(/^  version: .*$/m, '  version: 9.9.9'));
  const edited = loadDocument(file);

  expect(again).toBe(first);
  expect(Object.isFrozen(first.info)).toBe(true);
  expect(edited).not.toBe(first);
  expect(edited.info.version).toBe('9.9.9');
  expect(Object.isFrozen(edited.info)).toBe(true);
  expect(first.info.version).not.toBe('9.9.9');
});

/** Where the build writes each document under spec/ as JSON (scripts/precompile.mjs); `npm test` builds first. */
const BUILT = path.join(ROOT, 'dist', 'generated', 'documents');

test('the build has every document under spec/ as JSON, named by its text, the same as its YAML parses', () => {
  const spec = path.join(ROOT, 'spec');
  const files = fs.readdirSync(spec, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.yaml'));
  expect(files.length).toBeGreaterThan(3);
  for (const file of files) {
    const text = fs.readFileSync(path.join(spec, file), 'utf8');
    const fromYaml = parseDocumentText(text);

    expect([file, JSON.parse(fs.readFileSync(path.join(BUILT, parsedDocumentName(text)), 'utf8'))]).toStrictEqual([file, fromYaml]);
    expect([file, loadDocument(path.join(spec, file))]).toStrictEqual([file, fromYaml]);
  }
});

test("a document is read from the build's JSON of its exact text, where there is one", () => {
  const file = path.join(tmp.dir, 'built.yaml');
  const text = fs.readFileSync(SPEC_PATH, 'utf8').replace(/^  version: .*$/m, `  version: 0.0.${process.pid}`);
  fs.writeFileSync(file, text);
  // A copy that says otherwise than the text, to see which was read: named by this text alone, no other test finds it.
  const copy = path.join(BUILT, parsedDocumentName(text));
  fs.writeFileSync(copy, JSON.stringify({ ...(parseDocumentText(text) as object), info: { title: 'x', version: 'from the build' } }));
  try {
    expect(loadDocument(file).info.version).toBe('from the build');
  } finally {
    fs.rmSync(copy);
  }
});

test('the build leaves a document that JSON cannot carry unchanged to YAML', () => {
  const document = 'openapi: 3.0.3\ninfo: { title: t, version: "1" }\npaths: {}\n';

  expect(buildParsedDocument(`${document}x-limit: .inf\n`)).toBeUndefined();
  expect(buildParsedDocument(`${document}x-limit: -0\n`)).toBeUndefined();
  expect(buildParsedDocument(document)).toEqual({
    name: parsedDocumentName(document),
    json: '{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{}}',
  });
});

test('a file that is not an OpenAPI document is refused at every load, never remembered', () => {
  const file = path.join(tmp.dir, 'not-openapi.yaml');
  fs.writeFileSync(file, 'title: not a document\n');

  expect(() => loadDocument(file)).toThrow(`${file} is not an OpenAPI document`);
  expect(() => loadDocument(file)).toThrow(`${file} is not an OpenAPI document`);
});

test('a frozen document that is not valid OpenAPI is refused by every app given it', async () => {
  const file = path.join(tmp.dir, 'invalid.yaml');
  fs.writeFileSync(file, fs.readFileSync(SPEC_PATH, 'utf8').replace(/^openapi: .*$/m, 'openapi: 3.0.3\nx-extra: 1\nexternalDocs: 7'));
  const document = loadDocument(file);
  const store = openSqliteStore(path.join(tmp.dir, 'store.db'));
  try {
    await expect(createApp({ store, versions: { v1: { document } } })).rejects.toThrow('Document is not valid OpenAPI');
    await expect(createApp({ store, versions: { v1: { document } } })).rejects.toThrow('Document is not valid OpenAPI');
  } finally {
    await store.close();
  }
});

test("a frozen document's router and validators are built once for each root and query policy; a mutable copy's each time", async () => {
  const document = loadDocument(specPath('v2'));
  const options = { apiRoot: '/v2', undeclaredQuery: 'reject' } as const;

  const first = await createOpenApi(document, options);
  const again = await createOpenApi(document, options);
  const elsewhere = await createOpenApi(document, { ...options, apiRoot: '/' });
  const copy = cloneDocument(document);
  const ofCopy = await createOpenApi(copy, options);

  expect(again).toBe(first);
  expect(elsewhere).not.toBe(first);
  expect(ofCopy).not.toBe(first);
  expect(await createOpenApi(copy, options)).not.toBe(ofCopy);
  expect(first.operation('getOrderById')?.path).toBe('/store/orders/{orderId}');
});
