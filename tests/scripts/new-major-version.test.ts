import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { loadDocument } from '../../src/contract/document';
import { asOpenApi31 } from '../../src/openapi';
import { cli, serve } from '../helpers/cli';
import { npmRun, projectForFile, snapshot } from '../helpers/project';

// A spec author adds a major version, on a copy of the project: the document (in OpenAPI 3.1), its
// line in spec/documents.json, `npm run generate` and `npm run scaffold`, and nothing in src/ by hand.
const { tmpDir, dir, servers } = projectForFile();

beforeAll(() => {
  // Written in OpenAPI 3.1, as most new APIs are: v2's contract in 3.1's idioms.
  const v2 = asOpenApi31(loadDocument(path.join(dir, 'spec', 'openapi-v2.yaml')));
  fs.writeFileSync(path.join(dir, 'spec', 'openapi-v9.yaml'), stringify({ ...v2, info: { ...v2.info, version: '9.0.0' } }));
  const list = path.join(dir, 'spec', 'documents.json');
  const documents = JSON.parse(fs.readFileSync(list, 'utf8')) as unknown[];
  documents.push({ version: 'v9', document: 'spec/openapi-v9.yaml', types: 'generated/openapi-v9.ts' });
  fs.writeFileSync(list, `${JSON.stringify(documents, null, 2)}\n`);
}, 60000);

test('generate and scaffold are all it takes: the new version answers its mocks under its prefix', async () => {
  const before = snapshot(dir, ['src']);

  expect(npmRun(dir, 'generate').status).toBe(0);
  const scaffolded = npmRun(dir, 'scaffold');

  expect(scaffolded.status).toBe(0);
  expect(scaffolded.output).toContain('wrote src/handlers/v9/index.ts');
  expect(scaffolded.output).toContain('wrote src/handlers/index.ts');
  expect(fs.readFileSync(path.join(dir, 'generated', 'versions.ts'), 'utf8')).toContain('v9: v9;');
  // Only what the scaffold writes changed in src/: the new version's handlers and the list of versions.
  const after = snapshot(dir, ['src']);
  const changed = [...after.keys()].filter((file) => before.get(file) !== after.get(file));
  expect(
    changed.every((file) => file === path.join('src', 'handlers', 'index.ts') || file.startsWith(path.join('src', 'handlers', 'v9'))),
  ).toBe(true);

  expect(npmRun(dir, 'build')).toEqual({ status: 0, output: '' });
  expect(npmRun(dir, 'typecheck')).toEqual({ status: 0, output: '' });
  expect(npmRun(dir, 'check:documents').status).toBe(0);
  const db = path.join(tmpDir, 'v9.db');
  const key = cli(['--db', db, 'keys', 'create', '--name', 'author']).stdout.trim();
  const server = await serve(db, [], {}, path.join(dir, 'dist', 'src', 'cli', 'main.js'));
  servers.push(server);
  const list = await fetch(`${server.url}/v9/store/orders`, { headers: { Authorization: `Bearer ${key}` } });
  const document = await fetch(`${server.url}/v9/openapi.json`);
  const refused = await fetch(`${server.url}/v9/store/orders`);
  const tooMany = await fetch(`${server.url}/v9/store/orders?limit=1001`, { headers: { Authorization: `Bearer ${key}` } });

  expect(list.status).toBe(200);
  expect(list.headers.get('x-mock')).toBe('true');
  expect(document.status).toBe(200);
  expect(await document.json()).toMatchObject({ openapi: '3.1.0', info: { version: '9.0.0' } });
  expect(refused.status).toBe(401);
  expect(tooMany.status).toBe(400);
}, 180000);
