import { defineHandler } from '../../http/define-handler';
import { endpointResult } from '../../http/webhook-replies';
import { rotateSecret } from '../../webhooks/endpoints';

/** rotateWebhookEndpointSecret: POST /webhook-endpoints/{endpointId}/rotate-secret. A new secret, shown this once; the old one signs beside it for a day. */
export const rotateWebhookEndpointSecret = defineHandler('v3', 'rotateWebhookEndpointSecret', ({ store }) => async ({ path }) => ({
  status: 200,
  body: endpointResult(path.endpointId, await rotateSecret(store, path.endpointId)),
}));
