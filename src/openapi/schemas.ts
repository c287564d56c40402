import { isRecord } from '../records';

// Walking the Schema Objects of an OpenAPI document: where the document puts them, and the
// keywords through which one schema holds others. The dialects read these walks
// (./dialect.ts): what each OpenAPI line means by a schema, said in the JSON Schema Ajv runs.

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

/**
 * The document with `change` applied to every Schema Object in it (each as mapSchema applies it):
 * under components (schemas, parameters, headers, request bodies, responses, path items), and in
 * every path item, operation, parameter, header, media type and callback of `paths` and
 * `webhooks`. A `$ref` in place of any of these is left as it is.
 */
export function mapDocumentSchemas<D extends object>(document: D, change: (schema: Record<string, unknown>) => Record<string, unknown>): D {
  const schema = (value: unknown) => mapSchema(value, change);
  const mediaTypes = (content: unknown) => mapValues(content, (media) => fields(media, { schema }));
  const headers = (map: unknown) => mapValues(map, (header) => fields(header, { schema, content: mediaTypes }));
  const parameter = (value: unknown) => fields(value, { schema, content: mediaTypes });
  const parameters = (list: unknown) => (Array.isArray(list) ? list.map(parameter) : list);
  const requestBody = (value: unknown) => fields(value, { content: mediaTypes });
  const response = (value: unknown) => fields(value, { content: mediaTypes, headers });
  const callbacks = (map: unknown) => mapValues(map, (callback) => mapValues(callback, pathItem));
  const operation = (value: unknown) => fields(value, { parameters, requestBody, responses: (map) => mapValues(map, response), callbacks });
  const pathItem = (value: unknown): unknown =>
    fields(value, { parameters, ...Object.fromEntries(METHODS.map((method) => [method, operation])) });
  const components = (value: unknown) =>
    fields(value, {
      schemas: (map) => mapValues(map, schema),
      parameters: (map) => mapValues(map, parameter),
      headers,
      requestBodies: (map) => mapValues(map, requestBody),
      responses: (map) => mapValues(map, response),
      pathItems: (map) => mapValues(map, pathItem),
      callbacks,
    });
  const paths = (map: unknown) => mapValues(map, pathItem);
  return fields(document, { paths, webhooks: paths, components }) as D;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** A copy of `value` with each field that `changes` names replaced by its change of it, when `value` is an object that has it. */
function fields(value: unknown, changes: Readonly<Record<string, (value: unknown) => unknown>>): unknown {
  if (!isRecord(value)) return value;
  const copy: Record<string, unknown> = { ...value };
  for (const [name, change] of Object.entries(changes)) if (name in copy) copy[name] = change(copy[name]);
  return copy;
}

/** A copy of a map (an object of named values) with each value changed; anything else as it is. */
function mapValues(map: unknown, change: (value: unknown) => unknown): unknown {
  if (!isRecord(map)) return map;
  return Object.fromEntries(Object.entries(map).map(([name, value]) => [name, change(value)]));
}
