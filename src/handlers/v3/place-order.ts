import { defineHandler } from '../../http/define-handler';
import { orderPlacer } from '../../orders/place';

/**
 * placeOrder: POST /store/orders. A new pending order, placed exactly once per API key and
 * Idempotency-Key: a retry with the same key and body gets the first answer again; 422 for the
 * key with another body; 409 while its first placement runs (src/orders/place.ts).
 */
export const placeOrder = defineHandler('v3', 'placeOrder', ({ store, idempotencyHours, onPlacement }) => {
  const place = orderPlacer(store, { ordersPath: '/v3/store/orders', keptHours: idempotencyHours, onPlacement });
  return ({ keyName, headers, body }) => place(keyName, headers['Idempotency-Key'], body);
});
