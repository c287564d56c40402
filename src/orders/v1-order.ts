import type { Order } from '../contract/types';
import type { ListedOrder, OrderSnapshot } from '../store';

/** `true` when A and B have the same fields, each of the same type; otherwise `never`. */
type SameFields<A, B> = [keyof A, keyof B] extends [keyof B, keyof A]
  ? [Required<A>, Required<B>] extends [Required<B>, Required<A>]
    ? true
    : never
  : never;

/**
 * v1's Order is the order as the store's list holds it (ListedOrder), field for field: every field
 * but its status, which v1 does not show (its list has pending and shipped orders alike). Should the
 * Order generated from v1's document gain, lose or change a field, this line fails the typecheck.
 */
export const V1_ORDER_IS_LISTED_ORDER: SameFields<Order, ListedOrder> = true;

/**
 * v1's Orders for the store's list: the list's own orders, as they are (V1_ORDER_IS_LISTED_ORDER), so that
 * no object is made per order to map them. The reply check still checks every one.
 */
export function v1Orders(snapshot: OrderSnapshot): V1Orders {
  return snapshot;
}

/** The store's snapshot of the list, read as v1's Orders. */
export type V1Orders = Omit<OrderSnapshot, 'read'> & { read(max: number): Promise<Order[]> };
