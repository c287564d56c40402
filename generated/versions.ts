// Written by `npm run generate` from spec/documents.json; do not edit.
import type { operations as v1 } from './openapi';
import type { operations as v2 } from './openapi-v2';

/** The operations of each version's document, as openapi-typescript generated them. */
export interface VersionOperations {
  v1: v1;
  v2: v2;
}
