import type { ErrorObject } from 'ajv';
import OpenAPIBackend, { type Operation } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { cloneDocument, loadDocument, specPath } from '../../src/contract/document';
import { customizeAjv } from '../../src/openapi';

/**
 * The pinned openapi-backend on a copy of `document`, with the project's Ajv set-up, initialised:
 * what each step the project does in its place (src/openapi/) is compared with.
 */
export async function pinnedLibrary(document: OpenAPIV3.Document, apiRoot: string): Promise<OpenAPIBackend<OpenAPIV3.Document>> {
  const api = new OpenAPIBackend<OpenAPIV3.Document>({ definition: cloneDocument(document), apiRoot, strict: true, customizeAjv });
  await api.init();
  return api;
}

/** A check's answer: the errors it found, or null. */
type Answer = ErrorObject[] | null;
type Check<I> = (input: I, operation: Operation<OpenAPIV3.Document>, status: number) => Answer;

/**
 * Expects the project's check to answer every operation of `api`, every status and every input as
 * the library's does (the same errors, in the same order), asking ours twice: the second answer
 * comes from what the first found, and must not carry the first's errors. Counts the answers, so
 * that a test can hold that the inputs exercise both.
 */
export function expectLibraryAnswers<I>(
  api: OpenAPIBackend<OpenAPIV3.Document>,
  statuses: readonly number[],
  inputs: readonly I[],
  ours: Check<I>,
  library: Check<I>,
): { compared: number; passed: number; refused: number } {
  const counts = { compared: 0, passed: 0, refused: 0 };
  for (const operation of api.getOperations()) {
    for (const status of statuses) {
      for (const input of inputs) {
        const stock = library(input, operation, status);
        expect([ours(input, operation, status), ours(input, operation, status)]).toEqual([stock, stock]);
        counts.compared += 1;
        if (stock === null) counts.passed += 1;
        else counts.refused += 1;
      }
    }
  }
  return counts;
}

/** The statuses a reply check is compared at: declared ones, members of a range, and ones no document declares. */
const REPLY_STATUSES = [200, 201, 204, 206, 304, 400, 401, 404, 405, 409, 500, 503, 599];

/**
 * For v1, with `extra` paths beside its own, and for v2: a test that the project's check of one
 * part of a reply (`ours`, compiled on the pinned library) answers every operation, status and input
 * as the library's own check does (expectLibraryAnswers). `counted` is given the answers' counts,
 * to hold that the inputs exercise what the test means them to.
 */
export function describeReplyCheckAgainstLibrary<I>(options: {
  readonly extra: OpenAPIV3.PathsObject;
  readonly inputs: readonly I[];
  readonly title: string;
  readonly ours: (api: OpenAPIBackend<OpenAPIV3.Document>) => Check<I>;
  readonly library: (api: OpenAPIBackend<OpenAPIV3.Document>) => Check<I>;
  readonly counted: (counts: { compared: number; passed: number; refused: number }) => void;
}): void {
  const v1 = loadDocument();
  const documents: Array<[string, string, OpenAPIV3.Document]> = [
    ['v1', '/v1', { ...v1, paths: { ...v1.paths, ...options.extra } }],
    ['v2', '/v2', loadDocument(specPath('v2'))],
  ];

  describe.each(documents)('%s', (_version, apiRoot, document) => {
    let api: OpenAPIBackend<OpenAPIV3.Document>;
    let check: Check<I>;

    beforeAll(async () => {
      api = await pinnedLibrary(document, apiRoot);
      check = options.ours(api);
    });

    it(options.title, () => {
      options.counted(expectLibraryAnswers(api, REPLY_STATUSES, options.inputs, check, options.library(api)));
    });
  });
}
