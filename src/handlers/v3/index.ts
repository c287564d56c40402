// Written by `npm run scaffold` from spec/openapi-v3.yaml; do not edit. Each operation's handler is in its own module.
import type { HandlerDefinitions } from '../../http/define-handler';
import { cancelOrder } from './cancel-order';
import { createWebhookEndpoint } from './create-webhook-endpoint';
import { deleteWebhookEndpoint } from './delete-webhook-endpoint';
import { getOrderById } from './get-order-by-id';
import { getWebhookEndpoint } from './get-webhook-endpoint';
import { listOrderEvents } from './list-order-events';
import { listOrders } from './list-orders';
import { listWebhookDeliveries } from './list-webhook-deliveries';
import { listWebhookEndpoints } from './list-webhook-endpoints';
import { placeOrder } from './place-order';
import { replayWebhookEvents } from './replay-webhook-events';
import { rotateWebhookEndpointSecret } from './rotate-webhook-endpoint-secret';
import { shipOrder } from './ship-order';
import { updateWebhookEndpoint } from './update-webhook-endpoint';

/** The handler module of every operation in spec/openapi-v3.yaml. */
export const v3Handlers = {
  listOrders,
  placeOrder,
  getOrderById,
  cancelOrder,
  shipOrder,
  listOrderEvents,
  listWebhookEndpoints,
  createWebhookEndpoint,
  getWebhookEndpoint,
  deleteWebhookEndpoint,
  updateWebhookEndpoint,
  rotateWebhookEndpointSecret,
  listWebhookDeliveries,
  replayWebhookEvents,
} satisfies HandlerDefinitions<'v3'>;
