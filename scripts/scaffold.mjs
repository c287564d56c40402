// `npm run scaffold`: for every operation in the documents that has no handler module yet, writes a
// typed handler module that answers a mock from the document, and a test file for it; then rewrites
// the index of handler modules the app loads. It never overwrites a handler module or a test.
// `--check` writes nothing and fails when anything would be written (for `npm run check`).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { parse } from 'yaml';
import { loadSource } from './lib/load-source.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Each served document (spec/documents.json), and where its handlers and their tests live. */
const DOCUMENTS = JSON.parse(readFileSync(path.join(root, 'spec', 'documents.json'), 'utf8')).map(({ version, document }) => ({
  spec: document,
  version,
  handlers: `src/handlers/${version}`,
  tests: `tests/handlers/${version}`,
}));

const check = process.argv.includes('--check');
const unknown = process.argv.slice(2).filter((arg) => arg !== '--check');
if (unknown.length > 0) fail(`unknown argument ${unknown[0]}; the only option is --check`);

// The rule the server and `npm run check` apply to the statuses an operation must declare.
const { undeclaredFrameworkStatuses, describeUndeclared } = await loadSource('contract/framework-statuses');
// And to the scopes a secured operation must declare.
const { undeclaredScopes } = await loadSource('contract/scopes');

const pending = [];
for (const document of DOCUMENTS) pending.push(...(await plan(document)));
pending.push(...(await planVersions()));

if (check) {
  if (pending.length > 0) {
    for (const file of pending) process.stderr.write(`${file.path} ${file.reason}\n`);
    fail('handler modules do not match the documents: run `npm run scaffold` and commit the result');
  }
  process.stdout.write('every operation has a handler module, and the index lists them\n');
} else {
  for (const file of pending) {
    mkdirSync(path.dirname(path.join(root, file.path)), { recursive: true });
    writeFileSync(path.join(root, file.path), file.text);
    process.stdout.write(`wrote ${file.path}${file.note ? ` (${file.note})` : ''}\n`);
    for (const missing of file.undeclared ?? []) process.stderr.write(`declare it: ${describeUndeclared(missing)}\n`);
    for (const problem of file.unscoped ?? []) process.stderr.write(`declare them: ${problem}\n`);
  }
  if (pending.length === 0) process.stdout.write('nothing to scaffold: every operation has a handler module\n');
}

/** The files a document needs written: new handler modules and tests, and its index when it changed. */
async function plan(document) {
  const operations = operationsOf(document.spec);
  const files = [];
  for (const operation of operations) {
    const module = `${document.handlers}/${fileName(operation.operationId)}.ts`;
    if (existsSync(path.join(root, module))) continue;
    files.push({
      path: module,
      text: await format(module, handlerModule(operation, document)),
      reason: 'is missing',
      note: 'answers a mock until implemented',
      undeclared: operation.undeclared,
      unscoped: operation.unscoped,
    });
    const test = `${document.tests}/${fileName(operation.operationId)}.test.ts`;
    if (!existsSync(path.join(root, test)))
      files.push({ path: test, text: await format(test, testFile(operation, document)), reason: 'is missing' });
  }
  const index = `${document.handlers}/index.ts`;
  const text = await format(index, indexModule(operations, document));
  const current = existsSync(path.join(root, index)) ? readFileSync(path.join(root, index), 'utf8') : undefined;
  if (current !== text) files.push({ path: index, text, reason: 'does not list exactly the operations of the document' });
  for (const orphan of orphans(operations, document)) {
    process.stderr.write(`note: ${orphan} serves no operation of ${document.spec} any more; delete it if it is no longer needed\n`);
  }
  return files;
}

/** Every operation of a document, in document order, with what the templates need. */
function operationsOf(spec) {
  let document;
  try {
    document = parse(readFileSync(path.join(root, spec), 'utf8'));
  } catch (err) {
    fail(`cannot read ${spec}: ${err.message}`);
  }
  const operations = [];
  const seen = new Set();
  for (const [route, item] of Object.entries(document?.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item?.[method];
      if (operation === undefined) continue;
      const where = `${spec}: ${method.toUpperCase()} ${route}`;
      const { operationId } = operation;
      if (typeof operationId !== 'string') fail(`${where} has no operationId; every operation needs one to be routed`);
      if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(operationId)) fail(`${where}: operationId "${operationId}" must be a JavaScript identifier`);
      if (seen.has(operationId)) fail(`${where}: operationId "${operationId}" is used twice`);
      seen.add(operationId);
      const security = operation.security ?? document.security ?? [];
      operations.push({
        operationId,
        method: method.toUpperCase(),
        route,
        summary: typeof operation.summary === 'string' ? operation.summary.trim() : '',
        secured: security.length > 0 && !security.some((requirement) => Object.keys(requirement).length === 0),
        // The statuses the server can answer that the operation does not declare: npm run check and the server refuse them.
        undeclared: undeclaredFrameworkStatuses({ paths: { [route]: { [method]: operation } }, security: document.security }),
        // Whether it requires a key without declaring the scopes the key must hold: the same refuse it.
        unscoped: undeclaredScopes({ paths: { [route]: { [method]: operation } }, security: document.security }),
      });
    }
  }
  return operations;
}

/** Handler modules that no operation of the document names. */
function orphans(operations, document) {
  const dir = path.join(root, document.handlers);
  if (!existsSync(dir)) return [];
  const expected = new Set(operations.map((operation) => `${fileName(operation.operationId)}.ts`));
  expected.add('index.ts');
  return readdirSync(dir)
    .filter((name) => name.endsWith('.ts') && !expected.has(name))
    .map((name) => `${document.handlers}/${name}`);
}

function handlerModule(operation, document) {
  const { operationId, method, route, summary } = operation;
  return `import { defineHandler } from '../../http/define-handler';

/**
 * ${operationId}: ${method} ${route}.${summary ? ` ${summary}.` : ''}
 *
 * Written by \`npm run scaffold\`. Until it is implemented, the operation answers a mock built from
 * ${document.spec} with \`X-Mock: true\`. To implement it, replace \`mock\` with a handler: it gets the
 * operation's \`path\`, \`query\`, \`headers\` and \`body\`, typed from the document and already validated,
 * and returns one of the success replies the document declares, or throws an ApiError.
 */
export const ${operationId} = defineHandler('${document.version}', '${operationId}', ({ mock }) => mock);
`;
}

function testFile(operation, document) {
  const { operationId, method, route, secured } = operation;
  const unauthorized = secured
    ? `

    test('without an API key it is a 401 Error', async () => {
      const res = await sendExample(await createApp({ store: s.store }), '${operationId}', {}, '${document.version}');

      expect(res.status).toBe(401);
      await expectConforms(res, '${operationId}', '${document.version}');
    });`
    : '';
  return `import { createApp } from '../../../src/app';
import { expectConforms, sendExample } from '../../helpers/contract';
import { eachStore } from '../../helpers/stores';

// Written by \`npm run scaffold\` for ${operationId} (${method} ${document.version}${route}): grow it with the handler.
eachStore((s) => {
  describe('${operationId}', () => {
    test('a request built from the document gets a success reply the contract allows', async () => {
      // Arrange here what the store needs for a success reply, once the handler is real.

      const res = await sendExample(await createApp({ store: s.store }), '${operationId}', s.auth, '${document.version}');

      expect(res.status).toBeGreaterThanOrEqual(200);
      expect(res.status).toBeLessThan(300);
      await expectConforms(res, '${operationId}', '${document.version}');
    });${unauthorized}
  });
});
`;
}

/** src/handlers/index.ts, every version's handler index, when it does not list exactly the documents' versions. */
async function planVersions() {
  const index = 'src/handlers/index.ts';
  const text = await format(index, versionsModule());
  const current = existsSync(path.join(root, index)) ? readFileSync(path.join(root, index), 'utf8') : undefined;
  return current === text ? [] : [{ path: index, text, reason: 'does not list exactly the versions of spec/documents.json' }];
}

function versionsModule() {
  return `// Written by \`npm run scaffold\` from spec/documents.json; do not edit. The app serves each version listed here.
import type { ApiVersion } from '../contract/types';
import type { HandlerDefinitions } from '../http/define-handler';
${DOCUMENTS.map(({ version }) => `import { ${version}Handlers } from './${version}';`).join('\n')}

/** Every version, in spec/documents.json's order: the app serves each under its prefix. */
export const versions = [${DOCUMENTS.map(({ version }) => `'${version}'`).join(', ')}] as const satisfies readonly ApiVersion[];

/** The handler modules of each version. */
export const versionHandlers = { ${DOCUMENTS.map(({ version }) => `${version}: ${version}Handlers`).join(', ')} } satisfies {
  [V in ApiVersion]: HandlerDefinitions<V>;
};
`;
}

function indexModule(operations, document) {
  const sorted = [...operations].sort((a, b) => fileName(a.operationId).localeCompare(fileName(b.operationId)));
  return `// Written by \`npm run scaffold\` from ${document.spec}; do not edit. Each operation's handler is in its own module.
import type { HandlerDefinitions } from '../../http/define-handler';
${sorted.map(({ operationId }) => `import { ${operationId} } from './${fileName(operationId)}';`).join('\n')}

/** The handler module of every operation in ${document.spec}. */
export const ${document.version}Handlers = { ${operations.map(({ operationId }) => operationId).join(', ')} } satisfies HandlerDefinitions<'${document.version}'>;
`;
}

/** listOrders → list-orders. */
function fileName(operationId) {
  return operationId
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

async function format(file, text) {
  const options = (await prettier.resolveConfig(path.join(root, file))) ?? {};
  return prettier.format(text, { ...options, filepath: path.join(root, file) });
}

function fail(message) {
  process.stderr.write(`scaffold: ${message}\n`);
  process.exit(1);
}
