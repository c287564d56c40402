import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/temp-dir';
import { ROOT } from '../helpers/project';

// These prove that the spec drives the types: a copy of the project is typechecked after
// a spec edit and a regeneration, the way a spec author would make the change.
const root = ROOT;
const tmp = tempDir();
afterAll(tmp.cleanup);

function projectWithSpec(name: string, edit: (spec: string) => string): string {
  const dir = path.join(tmp.dir, name);
  for (const part of ['src', 'spec', 'generated']) fs.cpSync(path.join(root, part), path.join(dir, part), { recursive: true });
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({ extends: path.join(root, 'tsconfig.json'), compilerOptions: { types: ['node'] }, include: ['src', 'generated'] }),
  );
  const spec = path.join(dir, 'spec', 'openapi.yaml');
  fs.writeFileSync(spec, edit(fs.readFileSync(spec, 'utf8')));
  execFileSync(
    process.execPath,
    [path.join(root, 'node_modules/openapi-typescript/bin/cli.js'), spec, '-o', path.join(dir, 'generated', 'openapi.ts')],
    {
      stdio: 'ignore',
    },
  );
  return dir;
}

function typecheck(dir: string): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
  return { status: result.status, output: result.stdout + result.stderr };
}

test('the unedited spec, regenerated, typechecks', () => {
  expect(typecheck(projectWithSpec('same', (spec) => spec))).toEqual({ status: 0, output: '' });
}, 60000);

test("renaming an Order field in the spec and regenerating breaks the typecheck where v1 streams the store's orders, naming the field", () => {
  const dir = projectWithSpec('renamed', (spec) =>
    spec
      .replace('required: [id, petId, quantity, shipDate, complete]', 'required: [id, petId, quantity, shippingDate, complete]')
      .replace(/^        shipDate:$/m, '        shippingDate:'),
  );

  const { status, output } = typecheck(dir);

  expect(status).not.toBe(0);
  expect(output).toContain('src/orders/v1-order.ts');
  expect(output).toContain("Property 'shippingDate' is missing in type 'ListedOrder'");
}, 60000);

test('an operation added to the spec without a handler breaks the typecheck, naming it', () => {
  const dir = projectWithSpec('added', (spec) =>
    spec.replace(
      /^paths:\n/m,
      [
        'paths:',
        '  /store/inventory:',
        '    get:',
        '      operationId: getInventory',
        '      tags: [orders]',
        '      summary: Count orders by status',
        '      responses:',
        "        '200':",
        '          description: The counts.',
        "        '401':",
        "          $ref: '#/components/responses/Unauthorized'",
        '',
      ].join('\n'),
    ),
  );

  const { status, output } = typecheck(dir);

  expect(status).not.toBe(0);
  expect(output).toContain('getInventory');
}, 60000);

test.each([
  ['a path parameter cancelOrder does not declare', 'cancel-order.ts', 'cancelOrder(path.orderId)', 'cancelOrder(path.petId)', 'petId'],
  [
    'a query parameter listOrders does not declare',
    'list-orders.ts',
    'async ({ headers }) => {',
    'async ({ headers, query }) => {\n  void query.status;',
    'status',
  ],
])(
  'a handler that reads %s fails the typecheck, naming it',
  (_case, file, from, to, name) => {
    const dir = projectWithSpec(`reads-${name}`, (spec) => spec);
    const handler = path.join(dir, 'src', 'handlers', 'v1', file);
    const source = fs.readFileSync(handler, 'utf8');
    expect(source).toContain(from);
    fs.writeFileSync(handler, source.replace(from, to));

    const { status, output } = typecheck(dir);

    expect(status).not.toBe(0);
    expect(output).toContain(name);
  },
  60000,
);
