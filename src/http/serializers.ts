import type Ajv from 'ajv';
import type { Operation } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { compileItemWriter, type ItemWriter } from './item-writer';

/**
 * Compiles, for every response in the (dereferenced) spec whose JSON body is an array, the writer
 * of one item from the item schema itself, keyed by "operationId status": it checks the item
 * against the schema, formats included, and writes exactly the schema's properties. A streamed
 * array is so held to the same rules as any other reply, item by item, before each is written.
 */
export function compileArrayItems(operations: readonly Operation[], ajv: Ajv): Map<string, ItemWriter> {
  const items = new Map<string, ItemWriter>();
  for (const operation of operations) {
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      const schema = (response as OpenAPIV3.ResponseObject).content?.['application/json']?.schema as OpenAPIV3.SchemaObject | undefined;
      if (schema?.type !== 'array' || !schema.items) continue;
      items.set(`${operation.operationId} ${status}`, compileItemWriter(schema.items as OpenAPIV3.SchemaObject, ajv));
    }
  }
  return items;
}
