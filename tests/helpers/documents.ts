import type { OpenAPIV3 } from 'openapi-types';
import { cloneDocument, loadDocument } from '../../src/contract/document';

const errorResponse = (ref: string): OpenAPIV3.ReferenceObject => ({ $ref: `#/components/responses/${ref}` });

/** A note, the body of the createNote operation documentWithNotes adds. */
export const NOTE_SCHEMA: OpenAPIV3.SchemaObject = {
  type: 'object',
  additionalProperties: false,
  required: ['text'],
  properties: { text: { type: 'string', maxLength: 20 }, pinned: { type: 'boolean' } },
};

/**
 * The v1 document with one more operation, `POST /notes` (createNote), that takes a JSON body and
 * answers 201 with a note: what a spec author adding an operation with a body would write.
 * `edit` changes the operation before it is added.
 */
export function documentWithNotes(edit: (operation: OpenAPIV3.OperationObject) => void = () => undefined): OpenAPIV3.Document {
  const document = cloneDocument(loadDocument());
  const error = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
  const operation: OpenAPIV3.OperationObject<{ 'x-scopes'?: string[] }> = {
    operationId: 'createNote',
    'x-scopes': ['orders:read'],
    requestBody: { required: true, content: { 'application/json': { schema: NOTE_SCHEMA } } },
    responses: {
      '201': { description: 'The note.', content: { 'application/json': { schema: NOTE_SCHEMA } } },
      '400': errorResponse('BadRequest'),
      '401': errorResponse('Unauthorized'),
      '413': errorResponse('PayloadTooLarge'),
      '415': { description: 'The body is not JSON.', content: error },
      '500': errorResponse('InternalError'),
      '503': errorResponse('ServiceUnavailable'),
    },
  };
  edit(operation);
  document.paths['/notes'] = { post: operation };
  return document;
}
