import { defineHandler } from '../../http/define-handler';
import { endpointResult } from '../../http/webhook-replies';
import { createEndpoint } from '../../webhooks/endpoints';

/** createWebhookEndpoint: POST /webhook-endpoints. An endpoint at a checked URL, with its secret shown this once, at its address. */
export const createWebhookEndpoint = defineHandler('v3', 'createWebhookEndpoint', ({ store, service }) => async ({ body }) => {
  const made = endpointResult('', await createEndpoint(store, body, { rules: service.webhooks }));
  return { status: 201, body: made, headers: { Location: `/v3/webhook-endpoints/${made.id}` } };
});
