import { ApiError } from '../../errors';
import { defineHandler } from '../../http/define-handler';
import { endpointNotFound } from '../../http/webhook-replies';
import { deliveryPage } from '../../webhooks/endpoints';

/** listWebhookDeliveries: GET /webhook-endpoints/{endpointId}/deliveries. The endpoint's attempts, newest first, a page at a time. */
export const listWebhookDeliveries = defineHandler('v3', 'listWebhookDeliveries', ({ store }) => async ({ path, query }) => {
  const after = query.after === undefined ? undefined : Number(query.after);
  if (after !== undefined && !(Number.isSafeInteger(after) && after > 0 && String(after) === query.after)) {
    throw new ApiError('invalid_request', 'after must be the nextCursor of an earlier page of this log');
  }
  const page = await deliveryPage(store, path.endpointId, after, query.limit ?? 100);
  if (page === null) throw endpointNotFound(path.endpointId);
  return { status: 200, body: page };
});
