import { defineHandler } from '../../http/define-handler';
import { endpointNotFound } from '../../http/webhook-replies';

/** deleteWebhookEndpoint: DELETE /webhook-endpoints/{endpointId}. Removed with its log; nothing more is sent to it. */
export const deleteWebhookEndpoint = defineHandler('v3', 'deleteWebhookEndpoint', ({ store }) => async ({ path }) => {
  if (!(await store.webhooks.removeEndpoint(path.endpointId))) throw endpointNotFound(path.endpointId);
  return { status: 204 };
});
