import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/temp-dir';
import { ROOT, tscErrors } from '../helpers/project';

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

/** An operation the spec gains, with no handler module for it. */
const ADDED_OPERATION = [
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
].join('\n');

/** Handlers that read what their operation does not declare: file, the code replaced, and what replaces it. */
const WRONG_READS = [
  ['cancel-order.ts', 'cancelOrder(path.orderId)', 'cancelOrder(path.petId)'],
  ['list-orders.ts', 'async ({ headers }) => {', 'async ({ headers, query }) => {\n  void query.status;'],
] as const;

/**
 * One copy with every breaking change below at once, typechecked once: an Order field renamed in
 * the spec, an operation added to it, and two handlers that read what their operation does not
 * declare. Each test reads the errors of its own file.
 */
let broken: { status: number | null; errors: string[] } | undefined;
function brokenTypecheck(): { status: number | null; errors: string[] } {
  if (broken !== undefined) return broken;
  const dir = projectWithSpec('broken', (spec) =>
    spec
      .replace('required: [id, petId, quantity, shipDate, complete]', 'required: [id, petId, quantity, shippingDate, complete]')
      .replace(/^        shipDate:$/m, '        shippingDate:')
      .replace(/^paths:\n/m, ADDED_OPERATION),
  );
  for (const [file, from, to] of WRONG_READS) {
    const handler = path.join(dir, 'src', 'handlers', 'v1', file);
    const source = fs.readFileSync(handler, 'utf8');
    expect(source).toContain(from);
    fs.writeFileSync(handler, source.replace(from, to));
  }
  const { status, output } = typecheck(dir);
  broken = { status, errors: tscErrors(output) };
  return broken;
}

/** Whether a tsc error of the broken copy is in `file` (a path in the copy). */
const isIn = (error: string, file: string): boolean => error.slice(0, error.indexOf('(')).endsWith(`/broken/${file}`);

/** The errors tsc gave for `file` in the broken copy, one after another. */
const errorsIn = (file: string): string =>
  brokenTypecheck()
    .errors.filter((error) => isIn(error, file))
    .join('\n');

/** Where the broken copy's errors may be: the files it changed, and those that list the handlers, which lack getInventory's. */
const BROKEN_FILES = [
  'src/orders/v1-order.ts',
  'src/handlers/index.ts',
  'src/handlers/v1/index.ts',
  'src/app.ts',
  ...WRONG_READS.map(([file]) => `src/handlers/v1/${file}`),
];

test('the broken copy fails only where it was changed: the copy, regenerated, typechecks everywhere else', () => {
  const errors = brokenTypecheck().errors.filter((error) => error.trim() !== '');

  expect(errors.length).toBeGreaterThanOrEqual(WRONG_READS.length + 2);
  expect(errors.filter((error) => !BROKEN_FILES.some((file) => isIn(error, file)))).toEqual([]);
}, 60000);

test("renaming an Order field in the spec and regenerating breaks the typecheck where v1 streams the store's orders, naming the field", () => {
  expect(brokenTypecheck().status).not.toBe(0);
  expect(errorsIn('src/orders/v1-order.ts')).toContain("Property 'shippingDate' is missing in type 'ListedOrder'");
}, 60000);

test('an operation added to the spec without a handler breaks the typecheck, naming it', () => {
  expect(brokenTypecheck().status).not.toBe(0);
  expect(brokenTypecheck().errors.filter((error) => error.includes('getInventory'))).not.toEqual([]);
}, 60000);

test.each([
  ['a path parameter cancelOrder does not declare', 'cancel-order.ts', "Property 'petId' does not exist"],
  ['a query parameter listOrders does not declare', 'list-orders.ts', "Property 'status' does not exist"],
])(
  'a handler that reads %s fails the typecheck, naming it',
  (_case, file, error) => {
    expect(brokenTypecheck().status).not.toBe(0);
    expect(errorsIn(`src/handlers/v1/${file}`)).toContain(error);
  },
  60000,
);
