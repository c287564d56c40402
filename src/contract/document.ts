import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type * as Yaml from 'yaml';
import type { OpenAPIV3 } from 'openapi-types';
import type { ApiVersion } from './types';

/** Absolute path of the v1 OpenAPI document, found from either `src/` or the built `dist/src/`. */
export const SPEC_PATH: string = findUp(path.join('spec', 'openapi.yaml'));

/** Each version's document, as spec/documents.json lists them (paths from the project's root). */
const DOCUMENTS = readDocumentList(path.join(path.dirname(SPEC_PATH), 'documents.json'));

/** spec/documents.json: the versions and the files of their documents, checked as it is read. */
export function readDocumentList(file: string): ReadonlyArray<{ version: string; document: string }> {
  const list: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  const entries = Array.isArray(list) ? list.map((entry: unknown) => documentEntry(entry)) : [];
  if (!Array.isArray(list) || entries.some((entry) => entry === undefined)) {
    throw new Error(`${file} must be an array of {"version", "document"} entries`);
  }
  return entries.filter((entry) => entry !== undefined);
}

function documentEntry(entry: unknown): { version: string; document: string } | undefined {
  if (typeof entry !== 'object' || entry === null || !('version' in entry) || !('document' in entry)) return undefined;
  const { version, document } = entry;
  return typeof version === 'string' && typeof document === 'string' ? { version, document } : undefined;
}

/** Absolute path of a version's document. */
export function specPath(version: ApiVersion): string {
  const entry = DOCUMENTS.find((document) => document.version === version);
  if (entry === undefined) throw new Error(`spec/documents.json lists no document for ${version}`);
  return path.join(path.dirname(SPEC_PATH), '..', entry.document);
}

/** Whether `value` names a version spec/documents.json lists (as ApiVersion does, once `npm run generate` ran). */
export function isApiVersion(value: string): value is ApiVersion {
  return DOCUMENTS.some((document) => document.version === value);
}

/** The versions spec/documents.json lists, in its order. */
export function documentVersions(): string[] {
  return DOCUMENTS.map((document) => document.version);
}

/** Every version's document, in spec/documents.json's order. */
export function loadServedDocuments(): OpenAPIV3.Document[] {
  return DOCUMENTS.map((entry) => loadDocument(path.join(path.dirname(SPEC_PATH), '..', entry.document)));
}

/** Each file's last text and the frozen document parsed from it: a document is parsed again only when its text changed. */
const parsed = new Map<string, { text: string; document: OpenAPIV3.Document }>();

/**
 * The OpenAPI document as written: parsed, and deep-frozen so nothing can dereference it in place.
 * Being frozen, one parse serves every caller until the file's text changes.
 */
export function loadDocument(file: string = SPEC_PATH): OpenAPIV3.Document {
  const text = fs.readFileSync(file, 'utf8');
  const last = parsed.get(file);
  if (last?.text === text) return last.document;
  const document: unknown = parsedByTheBuild(text) ?? parseDocumentText(text);
  if (!isOpenApiDocument(document)) throw new Error(`${file} is not an OpenAPI document (it needs info.version and paths)`);
  parsed.set(file, { text, document: deepFreeze(document) });
  return document;
}

/**
 * A document's YAML (or JSON) text, parsed. The YAML parser is loaded on the first parse: a start
 * that finds every document parsed by the build never loads it.
 */
export function parseDocumentText(text: string): unknown {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('yaml') as typeof Yaml).parse(text);
}

/**
 * The build's copy of a document, as JSON, for a start that reads JSON far faster than YAML. Each
 * copy is named by the hash of the text it was parsed from (parsedDocumentName), so only that text finds
 * it. Code run from source (ts-jest) finds the project's build.
 */
const PARSED_BY_THE_BUILD = [
  path.join(__dirname, '..', '..', 'generated', 'documents'),
  path.join(__dirname, '..', '..', 'dist', 'generated', 'documents'),
];

/** The name of the build's JSON copy of a document with this text. */
export function parsedDocumentName(text: string): string {
  return `${createHash('sha256').update(text).digest('hex')}.json`;
}

/**
 * The document the build parsed from exactly this text, if it wrote one: the same value as
 * parseDocumentText's, which the build made sure JSON carries unchanged (buildParsedDocument).
 */
function parsedByTheBuild(text: string): unknown {
  const name = parsedDocumentName(text);
  for (const dir of PARSED_BY_THE_BUILD) {
    let json: string;
    try {
      json = fs.readFileSync(path.join(dir, name), 'utf8');
    } catch {
      continue;
    }
    return JSON.parse(json);
  }
  return undefined;
}

/**
 * For the build: the JSON copy of a document's text and its name, or undefined when JSON would not
 * carry the parsed document unchanged (YAML can say what JSON cannot: `.inf`, `-0`).
 */
export function buildParsedDocument(text: string): { name: string; json: string } | undefined {
  const document = parseDocumentText(text);
  const json = JSON.stringify(document);
  return isDeepStrictEqual(JSON.parse(json), document) ? { name: parsedDocumentName(text), json } : undefined;
}

/**
 * Whether parsed YAML or JSON is an OpenAPI 3.0 document as far as this project reads one without
 * a full check: an object with `info.version` and `paths`. The server's start and the compat
 * gate check the rest against the OpenAPI schema.
 */
export function isOpenApiDocument(value: unknown): value is OpenAPIV3.Document {
  if (typeof value !== 'object' || value === null || !('paths' in value) || !('info' in value)) return false;
  const { info, paths } = value;
  return (
    typeof paths === 'object' &&
    paths !== null &&
    typeof info === 'object' &&
    info !== null &&
    'version' in info &&
    typeof info.version === 'string'
  );
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

/**
 * What a document does with query parameters its operations do not declare: `ignore` them (v1), or
 * `reject` them with a 400 that names the first (v2), as its root's `x-undeclared-query` says.
 */
export function undeclaredQueryPolicy(document: OpenAPIV3.Document): 'ignore' | 'reject' {
  const policy: unknown = 'x-undeclared-query' in document ? document['x-undeclared-query'] : 'ignore';
  if (policy !== 'ignore' && policy !== 'reject')
    throw new Error(`x-undeclared-query must be "ignore" or "reject", not ${JSON.stringify(policy)}`);
  return policy;
}

/** The methods an OpenAPI 3.0 path item may hold an operation under. */
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Every operation of the document, in document order. */
export function* documentOperations<T extends object = object>(document: OpenAPIV3.Document<T>): Generator<OpenAPIV3.OperationObject<T>> {
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      const operation = item?.[method];
      if (operation !== undefined) yield operation;
    }
  }
}
