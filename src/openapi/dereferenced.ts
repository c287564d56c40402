import { createHash } from 'node:crypto';
import path from 'node:path';
import type OpenAPIBackend from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { isRecord } from '../records';
import { BUILT_HERE, PROJECT_BUILD, builtText, packageManifests } from './built';

/**
 * The documents' definitions as openapi-backend's `init` makes them, made by the build rather than
 * at every start. `init` dereferences a document with json-schema-ref-parser, which took about 50
 * ms of a start for the three documents, and about as much again to load Node.js's fetch
 * implementation: the parser's options ask `typeof Headers`, whose first read loads it.
 *
 * The build (scripts/precompile.mjs) starts the app as `serve` does, with recordDefinitions() on,
 * and writes each definition `init` made, as JSON, by the key of the document it was made from. A
 * start finds a definition there by that key and hands it to openapi-backend already dereferenced
 * (useBuiltDefinition); a document the build did not see (one edited since, or one a test makes)
 * is dereferenced by the library at start, as before. The file carries a fingerprint of the
 * dereferencer (openapi-backend's and json-schema-ref-parser's manifests): one made by another is
 * not used. tests/openapi/dereferenced.test.ts shows that a built definition is the library's own,
 * and that openapi-backend takes it as it is.
 */

/** The file, in a build's generated/ (./built.ts). */
const FILE = 'definitions.json';

interface DefinitionsFile {
  readonly fingerprint: string;
  /** Each definition's JSON by its document's key: parsed when it is asked for, so that every build of a document has its own. */
  readonly definitions: Readonly<Record<string, string>>;
}

/** The key of the definition made from `document` (the document as openapi-backend is given it). */
export function definitionKey(document: object): string {
  return createHash('sha256').update(JSON.stringify(document)).digest('hex');
}

/** The build's definition for `key`, a fresh object, or undefined where the build made none (or none this dereferencer would). */
export function builtDefinition(key: string): OpenAPIV3.Document | undefined {
  if (recording !== undefined) return undefined;
  loaded ??= { file: load() };
  const definitions = loaded.file?.definitions;
  const json = definitions !== undefined && Object.hasOwn(definitions, key) ? definitions[key] : undefined;
  return json === undefined ? undefined : definitionFromJson(json);
}

/** A definition from the JSON definitionJson wrote: each object it uses again the same object again. */
export function definitionFromJson(json: string): OpenAPIV3.Document | undefined {
  const definition = relinked(JSON.parse(json));
  return isDefinition(definition) ? definition : undefined;
}

/** A definition as the build writes one: a document, its `openapi` line and `paths` in place. */
function isDefinition(value: unknown): value is OpenAPIV3.Document {
  return isRecord(value) && typeof value.openapi === 'string' && isRecord(value.paths) && isRecord(value.info);
}

let loaded: { file: DefinitionsFile | undefined } | undefined;

function load(): DefinitionsFile | undefined {
  const text = builtText(path.join(BUILT_HERE, FILE)) ?? builtText(path.join(PROJECT_BUILD, FILE));
  if (text === undefined) return undefined;
  const file: unknown = JSON.parse(text);
  return isDefinitionsFile(file) && file.fingerprint === fingerprint() ? file : undefined;
}

function isDefinitionsFile(value: unknown): value is DefinitionsFile {
  return (
    isRecord(value) &&
    typeof value.fingerprint === 'string' &&
    isRecord(value.definitions) &&
    Object.values(value.definitions).every((json) => typeof json === 'string')
  );
}

/** The dereferencer, as one hash: openapi-backend's manifest and that of the json-schema-ref-parser it loads. */
function fingerprint(): string {
  const backend = path.dirname(require.resolve('openapi-backend/package.json'));
  const manifests = [...packageManifests(['openapi-backend']), ...packageManifests(['@apidevtools/json-schema-ref-parser'], backend)];
  return createHash('sha256').update(JSON.stringify(manifests)).digest('hex');
}

/**
 * Has openapi-backend take `definition`, dereferenced already, as it is: in its quick mode, `init`
 * skips json-schema-ref-parser (it copies the definition, which has no `$ref` left to resolve)
 * and leaves the document's check and the validators' compiling to its caller. So the document is
 * checked here, now, as `init` would have checked it (useDocumentCheck), and the caller compiles
 * the validators it uses (compileUsedValidators). The library's quick mode would also parse the
 * document with json-schema-ref-parser, unawaited; here the document is the definition itself.
 */
export function useBuiltDefinition(api: OpenAPIBackend, definition: OpenAPIV3.Document): void {
  api.loadDocument = () => {
    api.document = definition;
    return Promise.resolve(api.document);
  };
  api.validateDefinition();
}

/** The definitions made while the build records, by key, as JSON. */
let recording: Map<string, string> | undefined;

/** From now on, in this process, every document is dereferenced by the library and its definition kept for definitionsFile. For the build. */
export function recordDefinitions(): void {
  recording = new Map();
}

/**
 * Keeps the definition `init` made from the document of `key`, while recording. json-schema-ref-parser
 * gives every use of a `$ref` the same object, and openapi-backend makes its validators' schemas
 * from the objects as they are (one met twice becomes a `$ref` to where it was met first); so the
 * definition is written with each object once and every later use of it as a link (linked), and
 * a start makes each link that object again (relinked). A definition holding anything JSON cannot
 * carry is not kept: the library dereferences that document at start.
 */
export function recordDefinition(key: string, definition: object): void {
  if (recording === undefined) return;
  const json = definitionJson(definition);
  if (json !== undefined) recording.set(key, json);
}

/** A definition as JSON, each object it uses again written as a link to where it was met first; undefined when JSON cannot carry it. */
export function definitionJson(definition: object): string | undefined {
  const written = linked(definition);
  return written === undefined ? undefined : JSON.stringify(written);
}

/** The key of a link: no document's key is this (a definition with it is not kept). */
const LINK = '\u0000link';

/** Where a link's object was met first: the keys from the root. */
type Place = (string | number)[];

/**
 * The definition as a tree, each object or array met again (by a cycle too) replaced by
 * `{ [LINK]: place }`, the place where it was met first, depth first in JSON's order; undefined
 * when it holds something JSON would not carry unchanged (a function, a date, -0, undefined) or a
 * key LINK.
 */
function linked(definition: object): unknown {
  const first = new Map<object, Place>();
  const walk = (value: unknown, place: Place): unknown => {
    if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
    if (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0)) return value;
    if (typeof value !== 'object') throw new NotCarried();
    const met = first.get(value);
    if (met !== undefined) return { [LINK]: met };
    first.set(value, place);
    if (Array.isArray(value)) return value.map((each, index) => walk(each, [...place, index]));
    // A plain object, told by its tag, so that an object of any realm (a test's) is one.
    if (Object.prototype.toString.call(value) !== '[object Object]' || Object.hasOwn(value, LINK)) throw new NotCarried();
    return Object.fromEntries(Object.entries(value).map(([name, each]) => [name, walk(each, [...place, name])]));
  };
  try {
    return walk(definition, []);
  } catch (err) {
    if (err instanceof NotCarried) return undefined;
    throw err;
  }
}

class NotCarried extends Error {}

/**
 * A definition as linked wrote it, each link made the object met first at its place; undefined
 * for a link that names no such place. Every place a link names was met before the link, depth
 * first, so the way to it passes no link.
 */
function relinked(tree: unknown): unknown {
  const links: { readonly holder: unknown[] | Record<string, unknown>; readonly name: string; readonly place: unknown }[] = [];
  const walk = (holder: unknown): void => {
    if (!Array.isArray(holder) && !isRecord(holder)) return;
    for (const [name, each] of Object.entries(holder)) {
      if (isRecord(each) && Object.hasOwn(each, LINK)) links.push({ holder, name, place: each[LINK] });
      else walk(each);
    }
  };
  walk(tree);
  for (const { holder, name, place } of links) {
    const value = at(tree, place);
    if (value === undefined) return undefined;
    if (Array.isArray(holder)) holder[Number(name)] = value;
    else holder[name] = value;
  }
  return tree;
}

/** The value at `place` in `tree`, or undefined where there is none. */
function at(tree: unknown, place: unknown): unknown {
  if (!Array.isArray(place)) return undefined;
  let value = tree;
  for (const name of place) {
    if (Array.isArray(value) && typeof name === 'number') value = value[name];
    else if (isRecord(value) && typeof name === 'string' && Object.hasOwn(value, name)) value = value[name];
    else return undefined;
  }
  return value;
}

/** The file of every definition recorded so far, as the build writes it. */
export function definitionsFile(): string {
  if (recording === undefined) throw new Error('recordDefinitions() was not called: no definition was recorded');
  const file: DefinitionsFile = { fingerprint: fingerprint(), definitions: Object.fromEntries(recording) };
  return JSON.stringify(file);
}
