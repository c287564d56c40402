// Written by `npm run scaffold` from spec/openapi-v3.yaml; do not edit. Each operation's handler is in its own module.
import type { HandlerDefinitions } from '../../http/define-handler';
import { cancelOrder } from './cancel-order';
import { getOrderById } from './get-order-by-id';
import { listOrderEvents } from './list-order-events';
import { listOrders } from './list-orders';
import { placeOrder } from './place-order';
import { shipOrder } from './ship-order';

/** The handler module of every operation in spec/openapi-v3.yaml. */
export const v3Handlers = {
  listOrders,
  placeOrder,
  getOrderById,
  cancelOrder,
  shipOrder,
  listOrderEvents,
} satisfies HandlerDefinitions<'v3'>;
