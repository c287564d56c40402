import { defineHandler } from '../../http/define-handler';
import { placeReply } from '../../http/order-replies';
import { orderPlacer } from '../../orders/place';

/**
 * placeOrder: POST /store/orders. A new pending order, placed exactly once per API key and
 * Idempotency-Key: a retry with the same key and body gets the first answer again; 422 for the
 * key with another body; 409 while its first placement runs (src/http/order-replies.ts).
 */
export const placeOrder = defineHandler('v3', 'placeOrder', ({ store, service, onPlacement }) => {
  const place = orderPlacer(store, service.idempotencyHours);
  return async ({ keyName, headers, body }) => {
    if (keyName === undefined) throw new Error('placeOrder is secured: a placement always has its API key');
    const placed = await place(keyName, headers['Idempotency-Key'], body);
    onPlacement(placed.outcome);
    return placeReply('/v3/store/orders', placed);
  };
});
