// Fails when generated/ is stale: regenerates the types into a temporary file and compares bytes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const committed = 'generated/openapi.ts';
const dir = mkdtempSync(path.join(tmpdir(), 'petstore-generated-'));
try {
  const fresh = path.join(dir, 'openapi.ts');
  execFileSync(process.execPath, ['node_modules/openapi-typescript/bin/cli.js', 'spec/openapi.yaml', '-o', fresh], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (!readFileSync(fresh).equals(readFileSync(committed))) {
    process.stderr.write(`${committed} is stale: the spec changed. Run \`npm run generate\` and commit the result.\n`);
    process.exit(1);
  }
  process.stdout.write(`${committed} matches spec/openapi.yaml\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
