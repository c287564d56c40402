import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/project';
import { tempDir } from '../helpers/temp-dir';

// `npm run generate` and `npm run dev` make the documents' types in their own process
// (scripts/openapi-types.mjs) instead of running openapi-typescript's CLI once per document. What
// they write must stay what the CLI writes: this fails if the installed openapi-typescript changes
// under the adapter.
const tmp = tempDir();
afterAll(tmp.cleanup);

/** The newest document: OpenAPI 3.1, with webhooks, the most that openapi-typescript is asked to read. */
const DOCUMENT = (JSON.parse(fs.readFileSync(path.join(ROOT, 'spec', 'documents.json'), 'utf8')) as Array<{ document: string }>).at(
  -1,
)!.document;

/** openapi-typescript's CLI on `document` (relative to `root`), run from `root` as `npm run generate` ran it: what it wrote, and its status. */
function cli(root: string, document: string): { status: number | null; written: string | undefined } {
  const out = path.join(tmp.dir, `cli-${path.basename(document)}.ts`);
  fs.rmSync(out, { force: true });
  const result = spawnSync(process.execPath, [path.join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'), document, '-o', out], {
    cwd: root,
    encoding: 'utf8',
  });
  return { status: result.status, written: fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : undefined };
}

/** The adapter on each of `documents` (relative to `root`), in one process: its text for each, or `refused: <message>`. */
function adapter(root: string, documents: readonly string[]): string[] {
  const script = `
    import { typesMaker } from ${JSON.stringify(path.join(ROOT, 'scripts', 'openapi-types.mjs'))};
    const types = await typesMaker(${JSON.stringify(root)});
    const out = [];
    for (const document of ${JSON.stringify(documents)}) out.push(await types(document).catch((err) => 'refused: ' + err.message));
    process.stdout.write(JSON.stringify(out));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
  expect(result.status).toBe(0);
  return JSON.parse(result.stdout) as string[];
}

test("the newest document gets the types openapi-typescript's CLI writes, byte for byte", () => {
  const [made] = adapter(ROOT, [DOCUMENT]);

  const { status, written } = cli(ROOT, DOCUMENT);
  expect(status).toBe(0);
  expect(made).toBe(written);
}, 60000);

test('a document with a broken reference is refused, naming where', () => {
  const root = path.join(tmp.dir, 'project');
  fs.mkdirSync(path.join(root, 'spec'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'redocly.yaml'), path.join(root, 'redocly.yaml'));
  const v1 = fs.readFileSync(path.join(ROOT, 'spec', 'openapi.yaml'), 'utf8');
  const broken = v1.replace("$ref: '#/components/schemas/Order'", "$ref: '#/components/schemas/Missing'");
  expect(broken).not.toBe(v1);
  fs.writeFileSync(path.join(root, 'spec', 'broken.yaml'), broken);

  const [made] = adapter(root, ['spec/broken.yaml']);

  expect(made).toMatch(/^refused: Can't resolve \$ref at #\/paths\//);
}, 60000);
