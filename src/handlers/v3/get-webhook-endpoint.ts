import { defineHandler } from '../../http/define-handler';
import { endpointNotFound } from '../../http/webhook-replies';
import { endpointView } from '../../webhooks/endpoints';

/** getWebhookEndpoint: GET /webhook-endpoints/{endpointId}. One endpoint, without its secret. */
export const getWebhookEndpoint = defineHandler('v3', 'getWebhookEndpoint', ({ store }) => async ({ path }) => {
  const endpoint = await store.webhooks.getEndpoint(path.endpointId);
  if (endpoint === null) throw endpointNotFound(path.endpointId);
  return { status: 200, body: endpointView(endpoint) };
});
