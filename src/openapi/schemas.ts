import { isRecord } from '../records';

// Walking the Schema Objects of an OpenAPI document: where the document puts them, and the
// keywords through which one schema holds others. The dialects read these walks
// (./dialect.ts): what each OpenAPI line means by a schema, said in the JSON Schema Ajv runs.

/** A schema, as JSON: an object, or (in JSON Schema 2020-12) a boolean. */
export type Schema = Record<string, unknown> | boolean;

/** Keywords whose value is one schema. */
const ONE = [
  'items',
  'additionalItems',
  'additionalProperties',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'contentSchema',
] as const;
/** Keywords whose value is a list of schemas. */
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;
/** Keywords whose value maps names to schemas. */
const MAP = ['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions'] as const;

/**
 * The schema with `change` applied to it and to every schema within it, innermost first: each
 * call gets a schema whose subschemas have been changed already, and returns its replacement.
 * Nothing is changed in place.
 */
export function mapSchema(schema: unknown, change: (schema: Record<string, unknown>) => Record<string, unknown>): unknown {
  if (!isRecord(schema)) return schema;
  const copy: Record<string, unknown> = { ...schema };
  for (const keyword of ONE) if (keyword in copy) copy[keyword] = mapSchema(copy[keyword], change);
  for (const keyword of LIST) {
    const list = copy[keyword];
    if (Array.isArray(list)) copy[keyword] = list.map((each) => mapSchema(each, change));
  }
  for (const keyword of MAP) {
    const map = copy[keyword];
    if (isRecord(map)) copy[keyword] = Object.fromEntries(Object.entries(map).map(([name, each]) => [name, mapSchema(each, change)]));
  }
  return change(copy);
}

/** Whether `found` holds for the schema or any schema within it. */
export function someSchema(schema: unknown, found: (schema: Record<string, unknown>) => boolean): boolean {
  let seen = false;
  mapSchema(schema, (each) => {
    seen ||= found(each);
    return each;
  });
  return seen;
}

/**
 * The document with `change` applied to every Schema Object in it (each as mapSchema applies it):
 * under components (schemas, parameters, headers, request bodies, responses, path items), and in
 * every path item, operation, parameter, header, media type and callback of `paths` and
 * `webhooks`. A `$ref` in place of any of these is left as it is.
 */
export function mapDocumentSchemas<D extends object>(document: D, change: (schema: Record<string, unknown>) => Record<string, unknown>): D {
  const schema = (value: unknown) => mapSchema(value, change);
  const mediaTypes = (content: unknown) => mapValues(content, (media) => field(media, 'schema', schema));
  const headers = (map: unknown) => mapValues(map, (header) => field(field(header, 'schema', schema), 'content', mediaTypes));
  const parameter = (value: unknown) => field(field(value, 'schema', schema), 'content', mediaTypes);
  const requestBody = (value: unknown) => field(value, 'content', mediaTypes);
  const response = (value: unknown) => field(field(value, 'content', mediaTypes), 'headers', headers);
  const operation = (value: unknown): unknown =>
    field(
      field(
        field(
          field(value, 'parameters', (list) => (Array.isArray(list) ? list.map(parameter) : list)),
          'requestBody',
          requestBody,
        ),
        'responses',
        (map) => mapValues(map, response),
      ),
      'callbacks',
      (map) => mapValues(map, (callback) => mapValues(callback, pathItem)),
    );
  const pathItem = (value: unknown): unknown => {
    if (!isRecord(value)) return value;
    const copy: Record<string, unknown> = { ...value };
    for (const method of METHODS) if (method in copy) copy[method] = operation(copy[method]);
    return field(copy, 'parameters', (list) => (Array.isArray(list) ? list.map(parameter) : list));
  };
  const components = (value: unknown) =>
    [
      ['schemas', (map: unknown) => mapValues(map, schema)],
      ['parameters', (map: unknown) => mapValues(map, parameter)],
      ['headers', headers],
      ['requestBodies', (map: unknown) => mapValues(map, requestBody)],
      ['responses', (map: unknown) => mapValues(map, response)],
      ['pathItems', (map: unknown) => mapValues(map, pathItem)],
      ['callbacks', (map: unknown) => mapValues(map, (callback) => mapValues(callback, pathItem))],
    ].reduce<unknown>((each, [name, map]) => field(each, name as string, map as (value: unknown) => unknown), value);
  let mapped: unknown = document;
  mapped = field(mapped, 'paths', (map) => mapValues(map, pathItem));
  mapped = field(mapped, 'webhooks', (map) => mapValues(map, pathItem));
  mapped = field(mapped, 'components', components);
  return mapped as D;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** A copy of `value` with its field `name` replaced by `change` of it, when `value` is an object that has it. */
function field(value: unknown, name: string, change: (value: unknown) => unknown): unknown {
  if (!isRecord(value) || !(name in value)) return value;
  return { ...value, [name]: change(value[name]) };
}

/** A copy of a map (an object of named values) with each value changed; anything else as it is. */
function mapValues(map: unknown, change: (value: unknown) => unknown): unknown {
  if (!isRecord(map)) return map;
  return Object.fromEntries(Object.entries(map).map(([name, value]) => [name, change(value)]));
}
