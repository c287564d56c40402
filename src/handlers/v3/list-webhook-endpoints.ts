import { defineHandler } from '../../http/define-handler';
import { endpointPage } from '../../webhooks/endpoints';

/** listWebhookEndpoints: GET /webhook-endpoints. A page of endpoints in the order they were made, never their secrets. */
export const listWebhookEndpoints = defineHandler('v3', 'listWebhookEndpoints', ({ store }) => async ({ query }) => {
  // The document gives limit its default, which the input reader applies.
  const limit = query.limit ?? 100;
  return { status: 200, body: await endpointPage(store, query.after, limit) };
});
