import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A temporary directory for one test file, removed by `cleanup`. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-test-'));
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
