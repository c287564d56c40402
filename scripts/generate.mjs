// `npm run generate`: the types of every document in spec/documents.json, by openapi-typescript.
// `--check` writes nothing and fails when a committed file is stale (for `npm run check`).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const documents = JSON.parse(readFileSync(path.join(root, 'spec', 'documents.json'), 'utf8'));
const check = process.argv.includes('--check');
const unknown = process.argv.slice(2).filter((arg) => arg !== '--check');
if (unknown.length > 0) {
  process.stderr.write(`generate: unknown argument ${unknown[0]}; the only option is --check\n`);
  process.exit(1);
}

const generate = (document, out) =>
  execFileSync(process.execPath, [path.join(root, 'node_modules/openapi-typescript/bin/cli.js'), document, '-o', out], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });

const dir = mkdtempSync(path.join(tmpdir(), 'petstore-generated-'));
try {
  for (const { document, types } of documents) {
    if (!check) {
      generate(document, types);
      process.stdout.write(`${document} → ${types}\n`);
      continue;
    }
    const fresh = path.join(dir, path.basename(types));
    generate(document, fresh);
    if (readFileSync(fresh).equals(readFileSync(path.join(root, types)))) process.stdout.write(`${types} matches ${document}\n`);
    else {
      process.stderr.write(`${types} is stale: ${document} changed. Run \`npm run generate\` and commit the result.\n`);
      process.exitCode = 1;
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
