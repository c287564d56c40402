import fastJson from 'fast-json-stringify';
import type { Operation } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';

/**
 * Compiles, for every response in the (dereferenced) spec whose JSON body is an array, a serializer
 * of one item generated from the item schema itself, keyed by "operationId status". It writes
 * exactly the schema's properties and throws on a missing required one, so a streamed array
 * cannot drift from the contract.
 */
export function compileArraySerializers(operations: readonly Operation[]): Map<string, (item: unknown) => string> {
  const serializers = new Map<string, (item: unknown) => string>();
  for (const operation of operations) {
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      const schema = (response as OpenAPIV3.ResponseObject).content?.['application/json']?.schema as
        | OpenAPIV3.SchemaObject
        | undefined;
      if (schema?.type !== 'array' || !schema.items) continue;
      serializers.set(`${operation.operationId} ${status}`, fastJson(schema.items as Parameters<typeof fastJson>[0]));
    }
  }
  return serializers;
}
