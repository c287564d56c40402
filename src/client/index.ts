import createClient, { type Client } from 'openapi-fetch';
import type { ErrorBody, ErrorCode, Order, Pet, paths } from '../contract/types';

/** Where and how to call a deployment. */
export interface OrdersClientOptions {
  /** The deployment, with or without its `/v1`: `https://orders.example.com` or `https://orders.example.com/v1`. */
  baseUrl: string;
  /** An API key issued by the deployment's operator (`pso_…`). */
  apiKey: string;
  /** A fetch implementation; the global one by default. */
  fetch?: typeof fetch;
}

/** A non-2xx answer: the spec's Error object, typed, with the response it came in. */
export class OrdersApiError extends Error {
  override name = 'OrdersApiError';
  /** The HTTP status (equal to `body.status` when the body is the spec's Error). */
  readonly status: number;
  /** The spec's error code, or undefined when the body was not an Error (say, from a proxy). */
  readonly code: ErrorCode | undefined;
  readonly body: ErrorBody | undefined;

  constructor(
    readonly response: Response,
    body: unknown,
  ) {
    const error = isErrorBody(body) ? body : undefined;
    super(error ? `${error.code}: ${error.message}` : `HTTP ${response.status} without an Error body`);
    this.status = response.status;
    this.code = error?.code;
    this.body = error;
  }
}

/** The list, or word that it has not changed since the ETag given. */
export type ListResult = { notModified: false; orders: Order[]; etag: string | null } | { notModified: true; etag: string | null };

/** The deprecation a response announced (RFC 9745 and RFC 8594 headers). */
export interface Deprecation {
  deprecation: string | null;
  sunset: string | null;
  link: string | null;
}

/** A typed client for the Store Orders API v1. Every method throws OrdersApiError for a non-2xx answer. */
export interface OrdersClient {
  /** Every order not cancelled; pass the last ETag to get `notModified` instead of the same list again. */
  listOrders(options?: { ifNoneMatch?: string }): Promise<ListResult>;
  /** Cancels a pending order; OrdersApiError with code `order_already_shipped` (409) or `order_not_found` (404) otherwise. */
  cancelOrder(orderId: number): Promise<void>;
  /** Deprecated by the API: read `petId` from the orders instead. Returns the pet and the sunset it announced. */
  getPetById(petId: number): Promise<{ pet: Pet; deprecation: Deprecation }>;
  /** The underlying openapi-fetch client, typed from the spec, for anything the methods above do not cover. */
  readonly raw: Client<paths>;
}

/** Creates a client for one deployment and key. */
export function createOrdersClient(options: OrdersClientOptions): OrdersClient {
  const root = options.baseUrl.replace(/\/+$/, '');
  const raw = createClient<paths>({
    baseUrl: root.endsWith('/v1') ? root : `${root}/v1`,
    headers: { Authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  return {
    raw,
    async listOrders({ ifNoneMatch } = {}) {
      const { data, error, response } = await raw.GET('/store/orders', {
        params: { header: ifNoneMatch === undefined ? undefined : { 'If-None-Match': ifNoneMatch } },
      });
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

function isErrorBody(body: unknown): body is ErrorBody {
  const candidate = body as Partial<ErrorBody> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.code === 'string' &&
    typeof candidate.message === 'string' &&
    typeof candidate.status === 'number'
  );
}
