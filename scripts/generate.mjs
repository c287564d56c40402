// `npm run generate`: the types of every document in spec/documents.json, by openapi-typescript.
// `--check` writes nothing and fails when a committed file is stale (for `npm run check`).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { typesMaker } from './openapi-types.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const documents = JSON.parse(readFileSync(path.join(root, 'spec', 'documents.json'), 'utf8'));
const check = process.argv.includes('--check');
const unknown = process.argv.slice(2).filter((arg) => arg !== '--check');
if (unknown.length > 0) {
  process.stderr.write(`generate: unknown argument ${unknown[0]}; the only option is --check\n`);
  process.exit(1);
}

/**
 * The error codes a document lists: its `Error.code` enum (a closed set), or the
 * `x-extensible-enum` of an open set, which openapi-typescript types as any string.
 */
const errorCodes = (document) => {
  const code = parse(readFileSync(path.join(root, document), 'utf8'))?.components?.schemas?.Error?.properties?.code ?? {};
  const codes = code.enum ?? code['x-extensible-enum'];
  if (!Array.isArray(codes) || codes.length === 0) {
    throw new Error(`${document}: components.schemas.Error.properties.code lists no codes (enum, or x-extensible-enum for an open set)`);
  }
  return codes.map((value) => `'${value}'`).join(' | ');
};

/**
 * The operationIds of a document's `webhooks` (OpenAPI 3.1): requests the service sends, not
 * operations it serves, so no handler answers them.
 */
const webhookOperationIds = (document) =>
  Object.values(parse(readFileSync(path.join(root, document), 'utf8'))?.webhooks ?? {}).flatMap((item) =>
    Object.values(item ?? {})
      .map((operation) => operation?.operationId)
      .filter((id) => typeof id === 'string'),
  );

/** A version's served operations: openapi-typescript's, without its webhooks'. */
const servedOperations = ({ version, document }) => {
  const webhooks = webhookOperationIds(document);
  return webhooks.length === 0 ? version : `Omit<${version}, ${webhooks.map((id) => `'${id}'`).join(' | ')}>`;
};

/**
 * generated/versions.ts: each version's operations and error codes, so that a version listed in
 * spec/documents.json needs no hand edit.
 */
const VERSIONS = 'generated/versions.ts';
const versionsModule = () =>
  [
    '// Written by `npm run generate` from spec/documents.json; do not edit.',
    ...documents.map(({ version, types }) => `import type { operations as ${version} } from './${path.basename(types, '.ts')}';`),
    '',
    "/** The operations each version's document serves, as openapi-typescript generated them (its webhooks' are requests it sends). */",
    'export interface VersionOperations {',
    ...documents.map((entry) => `  ${entry.version}: ${servedOperations(entry)};`),
    '}',
    '',
    "/** The error codes each version's document lists: its closed `Error.code` enum, or the codes known in its open set. */",
    'export interface VersionErrorCodes {',
    ...documents.map(({ version, document }) => `  ${version}: ${errorCodes(document)};`),
    '}',
    '',
  ].join('\n');

const types = await typesMaker(root);
const versions = path.join(root, VERSIONS);
if (!check) {
  writeFileSync(versions, versionsModule());
  process.stdout.write(`spec/documents.json → ${VERSIONS}\n`);
} else if (!existsSync(versions) || readFileSync(versions, 'utf8') !== versionsModule()) {
  process.stderr.write(`${VERSIONS} is stale: spec/documents.json changed. Run \`npm run generate\` and commit the result.\n`);
  process.exitCode = 1;
} else process.stdout.write(`${VERSIONS} matches spec/documents.json\n`);
for (const { document, types: out } of documents) {
  let fresh;
  try {
    fresh = await types(document);
  } catch (err) {
    process.stderr.write(`${document}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
  if (!check) {
    writeFileSync(path.join(root, out), fresh);
    process.stdout.write(`${document} → ${out}\n`);
  } else if (existsSync(path.join(root, out)) && readFileSync(path.join(root, out), 'utf8') === fresh) {
    process.stdout.write(`${out} matches ${document}\n`);
  } else {
    process.stderr.write(`${out} is stale: ${document} changed. Run \`npm run generate\` and commit the result.\n`);
    process.exitCode = 1;
  }
}
