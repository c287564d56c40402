import { Readable } from 'node:stream';
import type { ValidateFunction } from 'ajv';
import type { OpenAPIV3 } from 'openapi-types';
import { describeAjvError } from '../contract/validation';
import { createContractAjv } from '../openapi';
import { ImportConflictError, type ImportRecord, type OrderImport } from '../store';
import { JsonArrayError, jsonArrayBatches } from './json-array';

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
 * An order is complete once it has shipped, and only then: shipping sets `complete`, and a record
 * whose two fields disagree is refused rather than guessed at.
 */
function fulfilmentProblem({ status = 'pending', complete }: ImportRecord): string | undefined {
  if (status === 'shipped' && !complete) return 'complete must be true when status is "shipped"';
  if (status !== 'shipped' && complete) return 'complete must be false unless status is "shipped"';
  return undefined;
}

/** Called as records are validated (after each chunk of the file), with how many have been read so far. */
export type ImportProgress = (records: number) => void;

/**
 * Imports a JSON array of orders from a stream: parsed, validated and staged a chunk of the file at
 * a time, so a file of any size is imported in bounded memory, then published in one transaction.
 * Throws ImportError, having written nothing, at the first bad record.
 */
export async function importOrders(
  store: OrderImport,
  validate: ValidateFunction<ImportRecord>,
  input: Readable | string,
  onProgress?: ImportProgress,
): Promise<number> {
  const source = typeof input === 'string' ? Readable.from([input]) : input;
  try {
    return await store.importOrders(validatedRecords(source, validate, onProgress));
  } catch (err) {
    if (err instanceof ImportConflictError) throw new ImportError(`record ${err.index}: ${err.message}`);
    throw err;
  }
}

/**
 * The file's records, validated, a batch per chunk read. A batch with a record the contract
 * refuses ends before it, so that the store stages every record before the refused one (an
 * earlier repeated id is still the error reported first); then the import fails on it.
 */
export async function* validatedRecords(
  input: Readable,
  validate: ValidateFunction<ImportRecord>,
  onProgress: ImportProgress | undefined,
): AsyncGenerator<readonly ImportRecord[]> {
  let count = 0;
  try {
    for await (const batch of jsonArrayBatches(input)) {
      const records: ImportRecord[] = [];
      for (const value of batch) {
        let problem: string | undefined;
        if (!validate(value)) problem = (validate.errors ?? []).map((error) => describeAjvError(error)).join('; ');
        else if ((problem = fulfilmentProblem(value)) === undefined) {
          records.push(value);
          continue;
        }
        if (records.length > 0) yield records;
        throw new ImportError(`record ${count + records.length}: ${problem}`);
      }
      yield records;
      count += records.length;
      onProgress?.(count);
    }
  } catch (err) {
    if (err instanceof ImportError) throw err;
    if (err instanceof JsonArrayError && err.kind === 'shape') throw new ImportError(err.message);
    const message = err instanceof Error ? err.message : String(err);
    throw new ImportError(`the file is not valid JSON: ${message}`);
  } finally {
    input.destroy();
  }
}
