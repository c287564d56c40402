import type { ValidateFunction } from 'ajv';
import type { OpenAPIV3 } from 'openapi-types';
import { createContractAjv, describeAjvError } from '../contract/validation';
import { ImportConflictError, type ImportRecord, type Store } from '../store';

/** An import file that cannot be imported; nothing was written. The message names the record and field. */
export class ImportError extends Error {
  override name = 'ImportError';
}

/**
 * The schema of one import record: the spec's own Order schema, with `id` optional and an
 * optional `status` of pending or shipped.
 */
export function importRecordSchema(document: OpenAPIV3.Document): object {
  const order = document.components?.schemas?.Order as OpenAPIV3.SchemaObject | undefined;
  if (!order?.properties) throw new Error('the spec has no Order schema');
  return {
    type: 'object',
    additionalProperties: false,
    required: (order.required ?? []).filter((name) => name !== 'id'),
    properties: {
      ...structuredClone(order.properties),
      status: { type: 'string', enum: ['pending', 'shipped'] },
    },
  };
}

/** Compiles the import-record validator with the same Ajv set-up the server validates with. */
export function compileImportValidator(document: OpenAPIV3.Document): ValidateFunction<ImportRecord> {
  return createContractAjv(document).compile<ImportRecord>(importRecordSchema(document));
}

/**
 * Parses and validates a whole import file (a JSON array of records), then inserts every record
 * in one transaction. Throws ImportError, having written nothing, on the first bad record.
 */
export async function importOrders(
  store: Store,
  validate: ValidateFunction<ImportRecord>,
  text: string,
): Promise<number> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ImportError(`the file is not valid JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new ImportError('the file must hold a JSON array of orders');
  const records: ImportRecord[] = [];
  const seen = new Map<number, number>();
  parsed.forEach((record: unknown, index) => {
    if (!validate(record)) {
      const problems = (validate.errors ?? []).map((error) => describeAjvError(error));
      throw new ImportError(`record ${index}: ${problems.join('; ')}`);
    }
    if (record.id !== undefined) {
      const first = seen.get(record.id);
      if (first !== undefined) {
        throw new ImportError(`record ${index}: id ${record.id} repeats the id of record ${first}`);
      }
      seen.set(record.id, index);
    }
    records.push(record);
  });
  try {
    return await store.importOrders(records);
  } catch (err) {
    if (err instanceof ImportConflictError) throw new ImportError(`record ${err.index}: ${err.message}`);
    throw err;
  }
}
