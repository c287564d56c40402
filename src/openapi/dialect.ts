import { isRecord } from '../records';
import { mapDocumentSchemas, mapSchema } from './schemas';

/**
 * The OpenAPI lines the scaffold reads. Each gives its Schema Objects a dialect: 3.0 its own
 * extended subset of JSON Schema (draft-04's boolean exclusive bounds, `nullable`), 3.1 JSON
 * Schema 2020-12, whole.
 */
export type OpenApiLine = '3.0' | '3.1';

/** A document's OpenAPI line, from its `openapi` field; an Error naming the field for any other. */
export function openApiLineOf(document: object): OpenApiLine {
  const version = isRecord(document) ? document.openapi : undefined;
  if (typeof version === 'string' && /^3\.0\.\d+$/.test(version)) return '3.0';
  if (typeof version === 'string' && /^3\.1\.\d+$/.test(version)) return '3.1';
  throw new Error(`openapi must be 3.0.x or 3.1.x, the versions this server reads, got ${JSON.stringify(version)}`);
}

/** The dialects a 3.1 document may name in jsonSchemaDialect: OpenAPI's base dialect (the default), or plain 2020-12. */
export const KNOWN_DIALECTS = ['https://spec.openapis.org/oas/3.1/dialect/base', 'https://json-schema.org/draft/2020-12/schema'];

/**
 * What stops the server from checking a 3.1 document's schemas as written, as one message per
 * cause, or none:
 * - a `jsonSchemaDialect` other than 2020-12 or OpenAPI's base dialect, whose keywords it does not know;
 * - `$dynamicRef` or `$dynamicAnchor`: Ajv resolves a dynamic reference only to an anchor at a
 *   schema resource's root, so one into `$defs`, the usual way to write a generic schema, would
 *   be checked against the wrong schema. A document that uses them is refused rather than
 *   checked wrongly.
 */
export function unsupportedSchemaFeatures(document: object): string[] {
  if (openApiLineOf(document) !== '3.1') return [];
  const problems: string[] = [];
  const dialect = isRecord(document) ? document.jsonSchemaDialect : undefined;
  if (dialect !== undefined && !(typeof dialect === 'string' && KNOWN_DIALECTS.includes(dialect))) {
    problems.push(`jsonSchemaDialect ${JSON.stringify(dialect)} is not one this server checks: use ${KNOWN_DIALECTS.join(' or ')}`);
  }
  let dynamic = false;
  // mapDocumentSchemas calls this on every schema, those within others too.
  mapDocumentSchemas(document, (schema) => {
    dynamic ||= '$dynamicRef' in schema || '$dynamicAnchor' in schema;
    return schema;
  });
  if (dynamic) {
    problems.push(
      "$dynamicRef and $dynamicAnchor are not supported: the validator resolves them only at a schema resource's root, so they would not be checked as written; use $ref",
    );
  }
  return problems;
}

/**
 * The document with each schema said in the JSON Schema its line's validator runs, meaning the
 * same: in 3.0, a boolean `exclusiveMinimum`/`exclusiveMaximum` becomes the numeric bound of JSON
 * Schema; in 3.1, a `$ref` with sibling keywords becomes `allOf: [{$ref}]` beside them, since both
 * apply (a dereference would otherwise merge the two, losing whichever the other overwrote).
 */
export function asValidatedDocument<D extends object>(document: D): D {
  const line = openApiLineOf(document);
  return mapDocumentSchemas(document, (schema) => validatedSchema(schema, line));
}

/** A schema of the document (taken on its own, outside a request) said as asValidatedDocument says it. */
export function asValidatedSchema(schema: unknown, line: OpenApiLine): unknown {
  return mapSchema(schema, (each) => validatedSchema(each, line));
}

function validatedSchema(schema: Record<string, unknown>, line: OpenApiLine): Record<string, unknown> {
  if (line === '3.0') return numericBounds(schema);
  if (typeof schema.$ref !== 'string' || Object.keys(schema).every((keyword) => keyword === '$ref' || NOT_VALIDATING.has(keyword))) {
    return schema;
  }
  const { $ref, ...siblings } = schema;
  const allOf: unknown[] = Array.isArray(siblings.allOf) ? siblings.allOf : [];
  return { ...siblings, allOf: [{ $ref }, ...allOf] };
}

/** Keywords beside a `$ref` that validate nothing, so that the `$ref` may stay as it is. */
const NOT_VALIDATING = new Set([
  'description',
  'summary',
  'title',
  'example',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$comment',
]);

/** 3.0's `minimum: 1, exclusiveMinimum: true` as JSON Schema's `exclusiveMinimum: 1` (and the same for the maximum). */
function numericBounds(schema: Record<string, unknown>): Record<string, unknown> {
  let copy = schema;
  for (const [exclusive, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof copy[exclusive] !== 'boolean') continue;
    const { [exclusive]: flag, [bound]: limit, ...rest } = copy;
    copy =
      flag === true && limit !== undefined
        ? { ...rest, [exclusive]: limit }
        : { ...rest, ...(limit === undefined ? {} : { [bound]: limit }) };
  }
  return copy;
}

/**
 * A 3.0 document as the same contract in 3.1 (a 3.1 document as it is): `nullable: true` as a
 * `type` list with `"null"` (and `null` among an `enum`'s values), boolean exclusive bounds as
 * numeric ones, a schema's `example` as `examples`, and `openapi: 3.1.0`. The compat gate compares
 * a 3.0 release with its 3.1 successor so, by what they mean, not by how they spell it.
 */
export function asOpenApi31<D extends object>(document: D): D {
  if (openApiLineOf(document) === '3.1') return document;
  const moved = mapDocumentSchemas(document, (schema) => {
    const { nullable, example, ...rest } = numericBounds(schema);
    const schema31: Record<string, unknown> = { ...rest, ...(example === undefined ? {} : { examples: [example] }) };
    if (nullable !== true || schema31.type === undefined) return schema31;
    const types: unknown[] = Array.isArray(schema31.type) ? schema31.type : [schema31.type];
    if (!types.includes('null')) schema31.type = [...types, 'null'];
    const values: unknown[] | undefined = Array.isArray(schema31.enum) ? schema31.enum : undefined;
    if (values !== undefined && !values.includes(null)) schema31.enum = [...values, null];
    return schema31;
  });
  return { ...moved, openapi: '3.1.0' };
}
