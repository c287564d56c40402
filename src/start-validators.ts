import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp } from './app';
import { loadDocument, specPath } from './contract/document';
import { webhookBodyCheck } from './contract/webhooks';
import { definitionsFile, precompiledModule, recordDefinitions, recordValidators } from './openapi';
import { compileImportValidator } from './orders/import';
import { openSqliteStore } from './store';

/**
 * Makes every validator a start of this project makes: the app's, made as `serve` makes it (on a
 * store of its own in a scratch folder), delivery's checks of webhook bodies, and the check of
 * `orders import`'s records.
 */
export async function makeStartValidators(): Promise<void> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-validators-'));
  try {
    const store = openSqliteStore(path.join(scratch, 'orders.db'));
    try {
      await createApp({ store });
    } finally {
      await store.close();
    }
    await webhookBodyCheck(loadDocument(specPath('v3')), 'v3');
    compileImportValidator(loadDocument());
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * What a start makes, made once, as the build writes it (scripts/precompile.mjs): the module of
 * those validators compiled, which a start loads (src/openapi/precompiled.ts), and the file of the
 * documents' definitions dereferenced (src/openapi/dereferenced.ts). It records in this process
 * from here on: call it before any validator is made, and once.
 */
export async function startValidatorsModule(): Promise<{ validators: string; definitions: string }> {
  recordValidators();
  recordDefinitions();
  await makeStartValidators();
  return { validators: precompiledModule(), definitions: definitionsFile() };
}
