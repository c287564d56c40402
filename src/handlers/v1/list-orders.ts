import { ifNoneMatchMatches } from '../../http/conditional';
import { defineHandler } from '../../http/define-handler';
import { v1Orders } from '../../orders/v1-order';

/** listOrders: GET /store/orders. Every pending or shipped order, streamed from a snapshot; 304 while the ETag matches. */
export const listOrders = defineHandler('v1', 'listOrders', ({ store, service }) => async ({ headers }) => {
  const etag = await store.listEtag();
  if (ifNoneMatchMatches(headers['If-None-Match'], etag)) return { status: 304, headers: { ETag: etag } };
  const snapshot = v1Orders(await store.snapshotOrders(service.listChunkItems));
  return { status: 200, stream: snapshot, headers: { ETag: snapshot.etag } };
});
