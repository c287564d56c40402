import { defineHandler } from '../../http/define-handler';
import { endpointResult } from '../../http/webhook-replies';
import { updateEndpoint } from '../../webhooks/endpoints';

/** updateWebhookEndpoint: PATCH /webhook-endpoints/{endpointId}. What the body gives changed; `status: enabled` turns it back on. */
export const updateWebhookEndpoint = defineHandler('v3', 'updateWebhookEndpoint', ({ store, service }) => async ({ path, body }) => {
  const changes = {
    ...(body.url === undefined ? {} : { url: body.url }),
    ...(body.events === undefined ? {} : { eventTypes: body.events }),
    ...(body.description === undefined ? {} : { description: body.description }),
    ...(body.status === undefined ? {} : { status: body.status }),
  };
  return {
    status: 200,
    body: endpointResult(path.endpointId, await updateEndpoint(store, path.endpointId, changes, { rules: service.webhooks })),
  };
});
