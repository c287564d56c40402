// `npm run check:documents`: fails, naming the operation and the status, when an operation of a
// served document can be answered with a status the server makes itself (401, 400, 415, 413) that
// the operation does not declare, or naming the operation when it requires a key but declares no
// scopes. The server refuses to start on such a document, in the same words.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { loadSource } from './lib/load-source.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { undeclaredFrameworkStatuses, describeUndeclared } = await loadSource('contract/framework-statuses');
const { undeclaredScopes } = await loadSource('contract/scopes');
const documents = JSON.parse(readFileSync(path.join(root, 'spec', 'documents.json'), 'utf8'));

let failed = 0;
let unscoped = 0;
for (const { document } of documents) {
  const parsed = parse(readFileSync(path.join(root, document), 'utf8'));
  const found = undeclaredFrameworkStatuses(parsed);
  for (const undeclared of found) process.stderr.write(`${document}: ${describeUndeclared(undeclared)}\n`);
  failed += found.length;
  const withoutScopes = undeclaredScopes(parsed);
  for (const problem of withoutScopes) process.stderr.write(`${document}: ${problem}\n`);
  unscoped += withoutScopes.length;
}
if (failed > 0) {
  process.stderr.write(`${failed} status${failed === 1 ? '' : 'es'} the server can answer ${failed === 1 ? 'is' : 'are'} not declared\n`);
}
if (unscoped > 0) process.stderr.write(`${unscoped} secured operation${unscoped === 1 ? ' declares' : 's declare'} no scopes\n`);
if (failed + unscoped > 0) process.exit(1);
process.stdout.write('every status the server can answer for an operation is declared by it, and every secured operation its scopes\n');
