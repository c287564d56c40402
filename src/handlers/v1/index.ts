// Written by `npm run scaffold` from spec/openapi.yaml; do not edit. Each operation's handler is in its own module.
import type { HandlerDefinitions } from '../../http/define-handler';
import { cancelOrder } from './cancel-order';
import { getPetById } from './get-pet-by-id';
import { listOrders } from './list-orders';

/** The handler module of every operation in spec/openapi.yaml. */
export const v1Handlers = { listOrders, cancelOrder, getPetById } satisfies HandlerDefinitions<'v1'>;
