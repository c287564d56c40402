import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { OpenAPIV3 } from 'openapi-types';
import type { ApiVersion } from './types';

/** Absolute path of the v1 OpenAPI document, found from either `src/` or the built `dist/src/`. */
export const SPEC_PATH: string = findUp(path.join('spec', 'openapi.yaml'));

/** Each version's document, as spec/documents.json lists them (paths from the project's root). */
const DOCUMENTS = JSON.parse(fs.readFileSync(path.join(path.dirname(SPEC_PATH), 'documents.json'), 'utf8')) as ReadonlyArray<{
  version: string;
  document: string;
}>;

/** Absolute path of a version's document. */
export function specPath(version: ApiVersion): string {
  const entry = DOCUMENTS.find((document) => document.version === version);
  if (entry === undefined) throw new Error(`spec/documents.json lists no document for ${version}`);
  return path.join(path.dirname(SPEC_PATH), '..', entry.document);
}

/** The OpenAPI document as written: loaded once, parsed, and deep-frozen so nothing can dereference it in place. */
export function loadDocument(file: string = SPEC_PATH): OpenAPIV3.Document {
  const document = parse(fs.readFileSync(file, 'utf8')) as OpenAPIV3.Document;
  return deepFreeze(document);
}

/** A mutable deep copy of the document, for libraries that rewrite what they are given. */
export function cloneDocument(document: OpenAPIV3.Document): OpenAPIV3.Document {
  return structuredClone<OpenAPIV3.Document>(document);
}

function findUp(relative: string): string {
  let dir = __dirname;
  for (;;) {
    const candidate = path.join(dir, relative);
    if (fs.existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find ${relative} above ${__dirname}`);
    dir = parent;
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
