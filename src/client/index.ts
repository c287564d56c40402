import createClient, { type Client } from 'openapi-fetch';
import type { paths as V2Paths, operations as V2Operations } from '../../generated/openapi-v2';
import type { components as V3Components, paths as V3Paths } from '../../generated/openapi-v3';
import { verifySignature, WebhookVerificationError, type ReceivedHeaders } from '../webhooks/signature';
import type { ErrorCode, Order, Pet, V2Order, V2OrderEvent, V2OrderPage, VersionErrorCodes, paths } from '../contract/types';
import { isRecord } from '../records';

/** Where and how to call a deployment. */
export interface OrdersClientOptions {
  /** The deployment, with or without a version prefix: `https://orders.example.com` or `https://orders.example.com/v1`. */
  baseUrl: string;
  /** An API key issued by the deployment's operator (`pso_…`). */
  apiKey: string;
  /** A fetch implementation; the global one by default. */
  fetch?: typeof fetch;
  /**
   * How reads answer a `503` or a `429` that carries `Retry-After` (a busy or unreachable server, a
   * spent rate limit): tried again after the time it asks for, at most `attempts` more times, within
   * `withinMs` in all (defaults 3 and 10,000). A cancel is never tried again by the client: see the README.
   */
  retries?: { attempts?: number; withinMs?: number };
}

/**
 * A code v3's open set may hold that this client does not know yet (a later 3.x may add codes):
 * handle it by the answer's status.
 */
export type UnknownErrorCode = string & Record<never, never>;

/** v3's error codes known to this client: its document's `x-extensible-enum`. */
export type V3ErrorCode = VersionErrorCodes['v3'];

/** The spec's Error object, as any version sends it: v1's and v2's closed codes, v3's known ones, or one unknown. */
export interface ApiErrorBody {
  readonly code: ErrorCode | UnknownErrorCode;
  readonly message: string;
  readonly status: number;
}

/** A non-2xx answer: the spec's Error object, typed, with the response it came in. */
export class OrdersApiError extends Error {
  override name = 'OrdersApiError';
  /** The HTTP status (equal to `body.status` when the body is the spec's Error). */
  readonly status: number;
  /** The spec's error code, or undefined when the body was not an Error (say, from a proxy). */
  readonly code: ErrorCode | UnknownErrorCode | undefined;
  readonly body: ApiErrorBody | undefined;
  /** The key's rate limit as the answer's `RateLimit` fields give it (v3, a key with policies), else undefined. */
  readonly rateLimit: RateLimitState | undefined;

  constructor(
    readonly response: Response,
    body: unknown,
  ) {
    const error = isErrorBody(body) ? body : undefined;
    super(error ? `${error.code}: ${error.message}` : `HTTP ${response.status} without an Error body`);
    this.status = response.status;
    this.code = error?.code;
    this.body = error;
    this.rateLimit = parseRateLimit(response.headers);
  }
}

/** One policy of `RateLimit-Policy`: its name (the unit), its quota and its window in seconds. */
export interface RateLimitPolicy {
  readonly name: string;
  readonly quota: number;
  readonly window: number;
}

/**
 * A key's rate limit as a response's structured fields state it (draft-ietf-httpapi-ratelimit-headers):
 * the tightest policy's name, what is left in it and the seconds until its window ends, and every policy.
 */
export interface RateLimitState {
  readonly policy: string;
  readonly remaining: number;
  readonly reset: number;
  readonly policies: readonly RateLimitPolicy[];
}

/** The `RateLimit` and `RateLimit-Policy` fields of a response, parsed; undefined when it has none, or they do not parse. */
export function parseRateLimit(headers: Headers): RateLimitState | undefined {
  const limit = headers.get('ratelimit');
  const policy = headers.get('ratelimit-policy');
  if (limit === null || policy === null) return undefined;
  const tight = /^"([^"]+)";r=(\d+);t=(\d+)$/.exec(limit.trim());
  if (tight === null) return undefined;
  const policies: RateLimitPolicy[] = [];
  for (const item of policy.split(',')) {
    const match = /^"([^"]+)";q=(\d+);w=(\d+)$/.exec(item.trim());
    if (match === null) return undefined;
    policies.push({ name: match[1] ?? '', quota: Number(match[2]), window: Number(match[3]) });
  }
  return { policy: tight[1] ?? '', remaining: Number(tight[2]), reset: Number(tight[3]), policies };
}

/** The list, or word that it has not changed since the ETag given. */
export type ListResult = { notModified: false; orders: Order[]; etag: string | null } | { notModified: true; etag: string | null };

/** v2's order as it is now, or word that it has not changed since the ETag given. */
export type OrderResult = { notModified: false; order: V2Order; etag: string | null } | { notModified: true; etag: string | null };

/** The deprecation a response announced (RFC 9745 and RFC 8594 headers). */
export interface Deprecation {
  deprecation: string | null;
  sunset: string | null;
  link: string | null;
}

/** v2's list filters, as its document declares them; `limit` is the page size (1–1000, default 100). */
export type V2ListQuery = Omit<NonNullable<V2Operations['listOrders']['parameters']['query']>, 'cursor'>;

/** The change feed's query, as its document declares it. */
export type V2EventsQuery = NonNullable<V2Operations['listOrderEvents']['parameters']['query']>;

/** One page of the change feed: events in commit order, and where to read on (never null). */
export type V2OrderEventPage = V2Paths['/store/order-events']['get']['responses'][200]['content']['application/json'];

/**
 * The change feed, tailed: every event after where it started, as they commit. `cursor` is where to
 * resume so that nothing after the events already taken from it is missed (events of its last
 * page may come again; applying one twice changes nothing).
 */
export interface EventTail extends AsyncIterable<V2OrderEvent> {
  readonly cursor: string | undefined;
}

/** Where a tail of the feed starts, how long each read waits, and what stops it. */
export interface EventTailOptions {
  /** A cursor from an earlier page or tail; without it, the feed starts at `from`. */
  after?: string;
  /** `oldest` (the default) or `latest`, without `after`. */
  from?: 'oldest' | 'latest';
  /** Seconds each read waits for an event when there is none (0–30, default 20). */
  wait?: number;
  /** Events per read (1–1000, default 100). */
  limit?: number;
  /** Ends the tail: the read under way is cancelled and the loop ends without an error. */
  signal?: AbortSignal;
}

/** The first pause after a failed read of a tail, doubled after each failure up to the longest. */
const RETRY_FIRST_MS = 1000;
const RETRY_LONGEST_MS = 30_000;

/** The Store Orders API v2: pages of orders, filtered. Every method throws OrdersApiError for a non-2xx answer. */
export interface OrdersClientV2 {
  /**
   * Every order that matches the filters, page after page, as one async iterable: it reads the
   * next page only when the loop gets there (`for await (const order of client.v2.orders({ status: 'pending' }))`).
   */
  orders(query?: V2ListQuery): AsyncIterable<V2Order>;
  /** One page: the first of the query, or the one after `cursor` (a `nextCursor`, sent with the same query). */
  listOrders(query?: V2ListQuery & { cursor?: string }, options?: { signal?: AbortSignal }): Promise<V2OrderPage>;
  /** Cancels a pending order, gone from both versions' lists; OrdersApiError with code `order_already_shipped` (409) or `order_not_found` (404) otherwise. */
  cancelOrder(orderId: number): Promise<void>;
  /**
   * One order as it is now, its status included, and its ETag; with `ifNoneMatch`, word that it has
   * not changed since that ETag. An unknown or cancelled order throws OrdersApiError (404).
   */
  getOrder(orderId: number, options?: { ifNoneMatch?: string; signal?: AbortSignal }): Promise<OrderResult>;
  /** One page of the change feed (listOrderEvents). */
  listOrderEvents(query?: V2EventsQuery, options?: { signal?: AbortSignal }): Promise<V2OrderEventPage>;
  /**
   * Tails the change feed until `signal` aborts: page after page, each read waiting up to `wait`
   * seconds for an event. After a network error or a 429, 502, 503 or 504 it pauses (1 s, doubling up
   * to 30 s) and reads again from its last cursor; any other error (a 400 for a cursor older than
   * the events kept, a 401) ends the loop by throwing OrdersApiError.
   */
  events(options?: EventTailOptions): EventTail;
  /** The underlying openapi-fetch client, typed from the v2 document. */
  readonly raw: Client<V2Paths>;
}

/**
 * The Store Orders API v3: v2's operations, with keys whose scopes and limits the answers state.
 * Reads retry a `429` after its `Retry-After`, as they do a `503`; a cancel is never retried. A key
 * without the scope gets OrdersApiError with code `insufficient_scope` (403); one over its limit
 * `rate_limited` (429) once the retries are spent.
 */
export interface OrdersClientV3 extends Omit<OrdersClientV2, 'raw'> {
  /**
   * Places an order exactly once (3.1): under `idempotencyKey`, or a UUID made for it. A network
   * error, a 409 `idempotency_key_in_use`, a 429 or a 503 is tried again with the same key (after
   * its `Retry-After`, else after a pause), within the `retries` budget, so that a placement whose
   * answer was lost is answered, never placed twice. Any other refusal throws OrdersApiError: a
   * 422 `idempotency_key_reused` means the key was used with another order.
   */
  placeOrder(order: V3NewOrder, options?: { idempotencyKey?: string; signal?: AbortSignal }): Promise<PlacedOrder>;
  /** Ships a pending order (3.1); OrdersApiError with code `order_already_shipped` (409) or `order_not_found` (404) otherwise. Never retried. */
  shipOrder(orderId: number): Promise<V2Order>;
  /**
   * The key's rate limit as the latest answer through v3 stated it (`RateLimit`,
   * `RateLimit-Policy`); undefined before the first, and for a key without policies.
   */
  readonly rateLimit: RateLimitState | undefined;
  /** Webhook endpoints (3.2, scope `webhooks:manage`): where the deployment sends each change. */
  readonly webhooks: OrdersClientWebhooks;
  /** The underlying openapi-fetch client, typed from the v3 document. */
  readonly raw: Client<V3Paths>;
}

type V3Schemas = V3Components['schemas'];
/** A webhook endpoint as v3 shows it: never its secret. */
export type WebhookEndpoint = V3Schemas['WebhookEndpoint'];
/** A webhook endpoint as it is made or its secret rotated, with its secret, shown only then. */
export type WebhookEndpointWithSecret = V3Schemas['WebhookEndpointWithSecret'];
/** One attempt of a delivery, from an endpoint's log. */
export type WebhookDelivery = V3Schemas['WebhookDelivery'];
/** The body of a delivery: the feed's event with its `id`, by type. */
export type WebhookEvent = V3Schemas['OrderCreatedWebhook'] | V3Schemas['OrderShippedWebhook'] | V3Schemas['OrderCancelledWebhook'];

/** The webhook endpoint operations of v3 (3.2). Each throws OrdersApiError for a non-2xx answer; none is retried. */
export interface OrdersClientWebhooks {
  /** Makes an endpoint; the answer holds its secret, shown only this once. */
  create(endpoint: V3Schemas['NewWebhookEndpoint']): Promise<WebhookEndpointWithSecret>;
  /** A page of endpoints, in the order they were made; follow `nextCursor` as `after`. */
  list(options?: { after?: string; limit?: number }): Promise<V3Schemas['WebhookEndpointPage']>;
  get(endpointId: string): Promise<WebhookEndpoint>;
  /** Changes an endpoint; `{ status: 'enabled' }` turns a disabled one back on. */
  update(endpointId: string, changes: V3Schemas['WebhookEndpointChange']): Promise<WebhookEndpoint>;
  remove(endpointId: string): Promise<void>;
  /** A new secret, shown this once; the old one signs beside it for 24 hours. */
  rotateSecret(endpointId: string): Promise<WebhookEndpointWithSecret>;
  /** A page of the endpoint's delivery log, newest first. */
  deliveries(endpointId: string, options?: { after?: string; limit?: number }): Promise<V3Schemas['WebhookDeliveryPage']>;
  /** Sends every event kept since `since` (an RFC 3339 date-time) again: how many. */
  replay(endpointId: string, since: string): Promise<number>;
}

/**
 * Checks a delivery a receiver got from the deployment: its Standard Webhooks headers are there,
 * its `webhook-timestamp` is within `toleranceSeconds` of now (300 unless given: a replayed old
 * delivery is refused), and one of its signatures is the body's under `secret` (`whsec_…`),
 * compared in constant time. Pass the body exactly as it arrived, before any JSON parsing. Returns
 * the event; throws WebhookVerificationError, whose message says which check failed.
 */
export function verifyWebhook(
  secret: string,
  headers: ReceivedHeaders,
  body: string | Uint8Array,
  options: { toleranceSeconds?: number } = {},
): WebhookEvent {
  const event = verifySignature(secret, headers, body, options);
  if (!isRecord(event) || typeof event.id !== 'string' || typeof event.type !== 'string') {
    throw new WebhookVerificationError('the body is not a webhook event');
  }
  return event as WebhookEvent;
}
export { WebhookVerificationError };

/** An order to place through v3, as its document declares it: `petId`, `quantity` (1–1000) and `shipDate`. */
export type V3NewOrder = V3Paths['/store/orders']['post']['requestBody']['content']['application/json'];

/** A placed order, its address, and the Idempotency-Key it was placed under (to retry with, or to log). */
export interface PlacedOrder {
  readonly order: V2Order;
  readonly location: string | null;
  readonly idempotencyKey: string;
}

/** A typed client for the Store Orders API: v1's operations, v2's under `v2` and v3's under `v3`. Every method throws OrdersApiError for a non-2xx answer. */
export interface OrdersClient {
  /** The same deployment and key, through v3. */
  readonly v3: OrdersClientV3;
  /** The same deployment and key, through v2. */
  readonly v2: OrdersClientV2;
  /** Every order not cancelled; pass the last ETag to get `notModified` instead of the same list again. */
  listOrders(options?: { ifNoneMatch?: string; signal?: AbortSignal }): Promise<ListResult>;
  /** Cancels a pending order; OrdersApiError with code `order_already_shipped` (409) or `order_not_found` (404) otherwise. */
  cancelOrder(orderId: number): Promise<void>;
  /** Deprecated by the API: read `petId` from the orders instead. Returns the pet and the sunset it announced. */
  getPetById(petId: number): Promise<{ pet: Pet; deprecation: Deprecation }>;
  /** The underlying openapi-fetch client, typed from the spec, for anything the methods above do not cover. */
  readonly raw: Client<paths>;
}

/** Creates a client for one deployment and key. */
export function createOrdersClient(options: OrdersClientOptions): OrdersClient {
  const root = options.baseUrl.replace(/\/+$/, '').replace(/\/v\d+$/, '');
  const settings = {
    headers: { Authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  const raw = createClient<paths>({ baseUrl: `${root}/v1`, ...settings });
  const retry = retrier(options.retries);

  return {
    raw,
    v2: createV2(createClient<V2Paths>({ baseUrl: `${root}/v2`, ...settings }), retry),
    v3: createV3(root, options, retry),
    async listOrders({ ifNoneMatch, signal } = {}) {
      const { data, error, response } = await retry(signal, () =>
        raw.GET('/store/orders', {
          params: { header: ifNoneMatch === undefined ? undefined : { 'If-None-Match': ifNoneMatch } },
          ...(signal ? { signal } : {}),
        }),
      );
      const etag = response.headers.get('etag');
      if (response.status === 304) return { notModified: true, etag };
      if (!response.ok || data === undefined) throw new OrdersApiError(response, error);
      return { notModified: false, orders: data, etag };
    },
    async cancelOrder(orderId) {
      const { error, response } = await raw.DELETE('/store/orders/{orderId}', { params: { path: { orderId } } });
      if (!response.ok) throw new OrdersApiError(response, error);
    },
    async getPetById(petId) {
      const { data, error, response } = await raw.GET('/pets/{petId}', { params: { path: { petId } } });
      if (!response.ok || data === undefined) throw new OrdersApiError(response, error);
      const header = (name: string) => response.headers.get(name);
      return { pet: data, deprecation: { deprecation: header('deprecation'), sunset: header('sunset'), link: header('link') } };
    },
  };
}

function createV2(raw: Client<V2Paths>, retry: Retry): OrdersClientV2 {
  const listOrders: OrdersClientV2['listOrders'] = async (query = {}, { signal } = {}) => {
    const { data, error, response } = await retry(signal, () =>
      raw.GET('/store/orders', { params: { query }, ...(signal ? { signal } : {}) }),
    );
    if (!response.ok || data === undefined) throw new OrdersApiError(response, error);
    return data;
  };
  const listOrderEvents: OrdersClientV2['listOrderEvents'] = async (query = {}, { signal } = {}) => {
    const { data, error, response } = await retry(signal, () =>
      raw.GET('/store/order-events', { params: { query }, ...(signal ? { signal } : {}) }),
    );
    if (!response.ok || data === undefined) throw new OrdersApiError(response, error);
    return data;
  };
  return {
    raw,
    listOrders,
    listOrderEvents,
    events: (options = {}) => tailEvents(listOrderEvents, options),
    async *orders(query = {}) {
      let cursor: string | undefined;
      do {
        const page = await listOrders(cursor === undefined ? query : { ...query, cursor });
        yield* page.orders;
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
    },
    async cancelOrder(orderId) {
      const { error, response } = await raw.DELETE('/store/orders/{orderId}', { params: { path: { orderId } } });
      if (!response.ok) throw new OrdersApiError(response, error);
    },
    async getOrder(orderId, { ifNoneMatch, signal } = {}) {
      const { data, error, response } = await retry(signal, () =>
        raw.GET('/store/orders/{orderId}', {
          params: { path: { orderId }, header: ifNoneMatch === undefined ? undefined : { 'If-None-Match': ifNoneMatch } },
          ...(signal ? { signal } : {}),
        }),
      );
      const etag = response.headers.get('etag');
      if (response.status === 304) return { notModified: true, etag };
      if (!response.ok || data === undefined) throw new OrdersApiError(response, error);
      return { notModified: false, order: data, etag };
    },
  };
}

/**
 * v3's client. Its four operations take and answer what v2's do (the same parameters, bodies and
 * Order), so v2's methods serve them, through a client of v2's types pointed at /v3; every answer's
 * RateLimit fields are kept as they come.
 */
function createV3(root: string, options: OrdersClientOptions, retry: Retry): OrdersClientV3 {
  const base = options.fetch ?? fetch;
  let rateLimit: RateLimitState | undefined;
  const observed: typeof fetch = async (input, init) => {
    const response = await base(input, init);
    // A 401 or a 403 is answered before the limit is counted, so it states nothing about it.
    if (response.status !== 401 && response.status !== 403) rateLimit = parseRateLimit(response.headers);
    return response;
  };
  const settings = { headers: { Authorization: `Bearer ${options.apiKey}` }, fetch: observed };
  const { raw: _v2Typed, ...methods } = createV2(createClient<V2Paths>({ baseUrl: `${root}/v3`, ...settings }), retry);
  const raw = createClient<V3Paths>({ baseUrl: `${root}/v3`, ...settings });
  const { attempts = 3, withinMs = 10_000 } = options.retries ?? {};
  return {
    ...methods,
    raw,
    get rateLimit() {
      return rateLimit;
    },
    async placeOrder(order, { idempotencyKey = globalThis.crypto.randomUUID(), signal } = {}) {
      const deadline = Date.now() + withinMs;
      let pause = RETRY_FIRST_MS;
      for (let attempt = 0; ; attempt += 1) {
        const last = attempt >= attempts || signal?.aborted === true;
        let wait: number;
        let failure: unknown;
        try {
          const { data, error, response } = await raw.POST('/store/orders', {
            params: { header: { 'Idempotency-Key': idempotencyKey } },
            body: order,
            ...(signal ? { signal } : {}),
          });
          if (response.ok && data !== undefined) return { order: data, location: response.headers.get('location'), idempotencyKey };
          failure = new OrdersApiError(response, error);
          const retryable = [429, 503].includes(response.status) || error?.code === 'idempotency_key_in_use';
          if (!retryable || last) throw failure;
          wait = retryAfterMs(response) ?? pause;
        } catch (err) {
          // A network error: the placement may or may not have been made; the same key tells.
          if (err instanceof OrdersApiError || !(err instanceof TypeError) || last) throw err;
          failure = err;
          wait = pause;
        }
        // Never sooner than asked: a wait that would end past the budget ends the tries now.
        if (!fitsBudget(wait, deadline)) throw failure;
        pause = Math.min(pause * 2, RETRY_LONGEST_MS);
        await sleep(wait, signal);
      }
    },
    async shipOrder(orderId) {
      const { data, error, response } = await raw.POST('/store/orders/{orderId}/ship', { params: { path: { orderId } } });
      if (!response.ok || data === undefined) throw new OrdersApiError(response, error);
      return data;
    },
    webhooks: webhooksOf(raw),
  };
}

/** v3's webhook endpoint operations, through its typed client. */
function webhooksOf(raw: Client<V3Paths>): OrdersClientWebhooks {
  const answered = <T>({ data, error, response }: { data?: T; error?: unknown; response: Response }): T => {
    if (!response.ok || data === undefined) throw new OrdersApiError(response, error);
    return data;
  };
  const at = (endpointId: string) => ({ params: { path: { endpointId } } });
  return {
    create: async (body) => answered(await raw.POST('/webhook-endpoints', { body })),
    list: async (query = {}) => answered(await raw.GET('/webhook-endpoints', { params: { query } })),
    get: async (endpointId) => answered(await raw.GET('/webhook-endpoints/{endpointId}', at(endpointId))),
    update: async (endpointId, body) => answered(await raw.PATCH('/webhook-endpoints/{endpointId}', { ...at(endpointId), body })),
    async remove(endpointId) {
      const { error, response } = await raw.DELETE('/webhook-endpoints/{endpointId}', at(endpointId));
      if (!response.ok) throw new OrdersApiError(response, error);
    },
    rotateSecret: async (endpointId) => answered(await raw.POST('/webhook-endpoints/{endpointId}/rotate-secret', at(endpointId))),
    deliveries: async (endpointId, query = {}) =>
      answered(await raw.GET('/webhook-endpoints/{endpointId}/deliveries', { params: { path: { endpointId }, query } })),
    replay: async (endpointId, since) =>
      answered(await raw.POST('/webhook-endpoints/{endpointId}/replay', { ...at(endpointId), body: { since } })).events,
  };
}

/** The feed read page after page from a cursor, as EventTail says. */
function tailEvents(read: OrdersClientV2['listOrderEvents'], options: EventTailOptions): EventTail {
  const { signal, wait = 20, limit } = options;
  let cursor = options.after;
  async function* events(): AsyncGenerator<V2OrderEvent> {
    let pause = RETRY_FIRST_MS;
    while (!signal?.aborted) {
      let page: V2OrderEventPage;
      try {
        const start = cursor === undefined ? (options.from === undefined ? {} : { from: options.from }) : { after: cursor };
        page = await read({ ...start, wait, ...(limit === undefined ? {} : { limit }) }, signal ? { signal } : {});
      } catch (err) {
        if (signal?.aborted) return;
        if (!retryable(err)) throw err;
        await sleep(pause, signal);
        pause = Math.min(pause * 2, RETRY_LONGEST_MS);
        continue;
      }
      pause = RETRY_FIRST_MS;
      yield* page.events;
      cursor = page.nextCursor;
    }
  }
  return {
    get cursor() {
      return cursor;
    },
    [Symbol.asyncIterator]: () => events(),
  };
}

/** Runs a read again while it answers a 503 with Retry-After, as OrdersClientOptions.retries says. */
type Retry = <R extends { response: Response }>(signal: AbortSignal | undefined, read: () => Promise<R>) => Promise<R>;

function retrier({ attempts = 3, withinMs = 10_000 }: OrdersClientOptions['retries'] = {}): Retry {
  return async (signal, read) => {
    const deadline = Date.now() + withinMs;
    for (let attempt = 0; ; attempt += 1) {
      const result = await read();
      const after = retryAfterMs(result.response);
      if (after === undefined || attempt >= attempts || signal?.aborted || !fitsBudget(after, deadline)) return result;
      await sleep(after, signal);
      if (signal?.aborted) return result;
    }
  };
}

/** Whether a retry after `wait` ms would still be sent before the `deadline` (epoch ms) of the tries' budget. */
function fitsBudget(wait: number, deadline: number): boolean {
  return Date.now() + wait <= deadline;
}

/** The wait a 503, a 429 or a 409 asks for in its Retry-After (seconds, or an HTTP date), in ms; undefined for any other answer. */
function retryAfterMs(response: Response): number | undefined {
  if (response.status !== 503 && response.status !== 429 && response.status !== 409) return undefined;
  const header = response.headers.get('retry-after');
  if (header === null) return undefined;
  const seconds = /^\d+$/.test(header.trim()) ? Number(header) * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(seconds) ? Math.max(0, seconds) : undefined;
}

/** Whether a failed read is worth repeating: the network, or a server or proxy that cannot answer now. */
function retryable(err: unknown): boolean {
  if (err instanceof OrdersApiError) return [429, 502, 503, 504].includes(err.status);
  return err instanceof TypeError;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}

function isErrorBody(body: unknown): body is ApiErrorBody {
  return isRecord(body) && typeof body.code === 'string' && typeof body.message === 'string' && typeof body.status === 'number';
}
