// Written by `npm run generate` from spec/documents.json; do not edit.
import type { operations as v1 } from './openapi';
import type { operations as v2 } from './openapi-v2';
import type { operations as v3 } from './openapi-v3';

/** The operations each version's document serves, as openapi-typescript generated them (its webhooks' are requests it sends). */
export interface VersionOperations {
  v1: v1;
  v2: v2;
  v3: Omit<v3, 'orderCreatedWebhook' | 'orderShippedWebhook' | 'orderCancelledWebhook'>;
}

/** The error codes each version's document lists: its closed `Error.code` enum, or the codes known in its open set. */
export interface VersionErrorCodes {
  v1: 'invalid_request' | 'unauthorized' | 'order_not_found' | 'pet_not_found' | 'not_found' | 'method_not_allowed' | 'order_already_shipped' | 'internal_error' | 'service_unavailable';
  v2: 'invalid_request' | 'unauthorized' | 'order_not_found' | 'pet_not_found' | 'not_found' | 'method_not_allowed' | 'order_already_shipped' | 'internal_error' | 'service_unavailable';
  v3: 'invalid_request' | 'unauthorized' | 'insufficient_scope' | 'order_not_found' | 'not_found' | 'method_not_allowed' | 'order_already_shipped' | 'webhook_endpoint_not_found' | 'idempotency_key_in_use' | 'idempotency_key_reused' | 'rate_limited' | 'internal_error' | 'service_unavailable';
}
