import { isDeepStrictEqual } from 'node:util';
import type { OpenAPIV3 } from 'openapi-types';
import { isRecord } from '../records';
import { documentOperations, undeclaredQueryPolicy } from '../contract/document';
import { createContractChecker } from '../contract/conformance';
import { scopesOf } from '../contract/scopes';
import { deprecationHeaders } from '../contract/deprecation';
import type { ApiVersion } from '../contract/types';

/** What `contract-check` is asked to do. */
export interface DeploymentCheckOptions {
  /** The deployment, with or without a version prefix. */
  baseUrl: string;
  apiKey: string;
  /** The version to check (default v1): its document, under its prefix. */
  version?: ApiVersion;
  /** The spec the deployment must keep: the version's document. */
  document: OpenAPIV3.Document;
  /**
   * Also cancel `cancelOrder` (expecting 204 then 404) and try to cancel `shippedOrder` (expecting
   * 409); with `place`, where the version has placeOrder, place an order, replay it and ship it.
   */
  writes?: { cancelOrder?: number; shippedOrder?: number; place?: boolean };
  fetch?: typeof fetch;
}

/** One check and how it went. */
export interface CheckResult {
  name: string;
  ok: boolean;
  /** What was wrong, when it failed. */
  problem?: string;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  /** The body as it came, for a replay compared byte for byte. */
  text: string;
}

/**
 * Calls a deployment the way a consumer would and checks every answer against the spec, with the
 * same compiled schemas and the same conformance rules the server applies to its own replies.
 * Read-only unless `writes` is given.
 */
export async function checkDeployment(options: DeploymentCheckOptions): Promise<CheckResult[]> {
  const root = options.baseUrl.replace(/\/+$/, '').replace(/\/v\d+$/, '');
  const version = options.version ?? 'v1';
  const prefix = `/${version}`;
  const doFetch = options.fetch ?? fetch;
  const checker = await createContractChecker(options.document);
  const results: CheckResult[] = [];
  const auth = { Authorization: `Bearer ${options.apiKey}` };

  const call = async (method: string, path: string, headers: Record<string, string> = {}, json?: unknown): Promise<Answer> => {
    const res = await doFetch(
      `${root}${path}`,
      json === undefined
        ? { method, headers }
        : { method, headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(json) },
    );
    const text = await res.text();
    let body: unknown;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const names: Record<string, string> = {};
    res.headers.forEach((value, name) => (names[name] = value));
    return { status: res.status, headers: names, body, text };
  };
  const check = async (name: string, run: () => Promise<string | null>): Promise<void> => {
    try {
      const problem = await run();
      results.push(problem === null ? { name, ok: true } : { name, ok: false, problem });
    } catch (err) {
      results.push({ name, ok: false, problem: `request failed: ${err instanceof Error ? err.message : String(err)}` });
    }
  };
  /** The answer must have the expected status and conform to the operation (or be an Error outside one). */
  const expectAnswer = (answer: Answer, status: number, operationId: string | undefined): string | null => {
    if (answer.status !== status) {
      return `expected ${status}, got ${answer.status}: ${JSON.stringify(answer.body)?.slice(0, 200)}${scopeAdvice(answer, version, options.document)}`;
    }
    const problem = checker.problem(operationId, answer);
    if (problem) return problem;
    if (status >= 400 && (!isRecord(answer.body) || answer.body.status !== status)) return `Error.status is not ${status}`;
    return null;
  };

  await check(`GET ${prefix}/openapi.json serves the local spec, unchanged`, async () => {
    const answer = await call('GET', `${prefix}/openapi.json`);
    if (answer.status !== 200) return `expected 200, got ${answer.status}`;
    return isDeepStrictEqual(answer.body, JSON.parse(JSON.stringify(options.document)))
      ? null
      : 'the served document differs from the local spec';
  });

  const listed =
    version === 'v1'
      ? await checkV1List(call, check, expectAnswer, auth)
      : await checkPagedList(call, check, expectAnswer, auth, options.document, prefix);

  for (const [name, headers] of [
    ['without a key', {}],
    ['with a wrong key', { Authorization: 'Bearer pso_contract-check-not-a-key' }],
  ] as const) {
    await check(`listOrders ${name}: 401 Error with a Bearer challenge`, async () => {
      const answer = await call('GET', `${prefix}/store/orders`, headers);
      const problem = expectAnswer(answer, 401, 'listOrders');
      if (problem) return problem;
      return /^Bearer\b/i.test(answer.headers['www-authenticate'] ?? '') ? null : 'no WWW-Authenticate: Bearer header';
    });
  }

  // The lowest safe id that the list does not hold: an import never assigns it.
  const held = new Set(listed.map((order) => order.id));
  let unknown = -Number.MAX_SAFE_INTEGER;
  while (held.has(unknown)) unknown += 1;

  await check('cancelOrder of an unknown order: 404 Error', async () =>
    expectAnswer(await call('DELETE', `${prefix}/store/orders/${unknown}`, auth), 404, 'cancelOrder'),
  );

  const declares = (operationId: string): boolean =>
    [...documentOperations(options.document)].some((operation) => operation.operationId === operationId);
  if (declares('getOrderById')) await checkGetOrder(call, check, expectAnswer, auth, listed, unknown, prefix);
  // Where the feed stands before any write of this check, to find the cancel's event after it.
  const feedBefore = declares('listOrderEvents') ? await checkEventFeed(call, check, expectAnswer, auth, prefix) : undefined;

  await check('cancelOrder with a malformed id: 400 Error', async () =>
    expectAnswer(await call('DELETE', `${prefix}/store/orders/4.2e1`, auth), 400, 'cancelOrder'),
  );

  await check('an unknown path: 404 Error', async () =>
    expectAnswer(await call('GET', `${prefix}/contract-check/nowhere`, auth), 404, undefined),
  );

  for (const [operationId, expected] of deprecationHeaders(options.document)) {
    await check(`${operationId} is deprecated: Deprecation, Sunset and Link headers as the spec says`, async () => {
      const petId = listed[0]?.petId ?? 1;
      const answer = await call('GET', `${prefix}/pets/${petId}`, auth);
      const problem = checker.problem(operationId, answer);
      if (problem) return `status ${answer.status}: ${problem}`;
      for (const [header, value] of Object.entries(expected)) {
        if (answer.headers[header.toLowerCase()] !== value)
          return `${header} is ${JSON.stringify(answer.headers[header.toLowerCase()])}, expected ${JSON.stringify(value)}`;
      }
      return null;
    });
  }

  const { cancelOrder, shippedOrder } = options.writes ?? {};
  if (cancelOrder !== undefined) {
    await check(`cancelOrder ${cancelOrder}: 204, then 404 when cancelled again`, async () => {
      const first = expectAnswer(await call('DELETE', `${prefix}/store/orders/${cancelOrder}`, auth), 204, 'cancelOrder');
      if (first) return first;
      return expectAnswer(await call('DELETE', `${prefix}/store/orders/${cancelOrder}`, auth), 404, 'cancelOrder');
    });
  }
  if (cancelOrder !== undefined && feedBefore !== undefined) {
    await check(`listOrderEvents after the cancel of ${cancelOrder}: its order.cancelled event, within 10 s`, async () => {
      const answer = await call('GET', `${prefix}/store/order-events?wait=10&limit=1000&after=${encodeURIComponent(feedBefore)}`, auth);
      const problem = expectAnswer(answer, 200, 'listOrderEvents');
      if (problem) return problem;
      const events = isRecord(answer.body) && Array.isArray(answer.body.events) ? answer.body.events : [];
      return events.some((event) => isRecord(event) && event.type === 'order.cancelled' && event.orderId === cancelOrder)
        ? null
        : `no order.cancelled event of order ${cancelOrder} after the cursor taken before it`;
    });
  }
  if (shippedOrder !== undefined) {
    await check(`cancelOrder ${shippedOrder} (shipped): 409 Error`, async () =>
      expectAnswer(await call('DELETE', `${prefix}/store/orders/${shippedOrder}`, auth), 409, 'cancelOrder'),
    );
  }
  if (declares('placeOrder')) await checkPlacement(call, check, expectAnswer, auth, prefix, options.writes?.place === true, unknown);
  if (declares('listWebhookEndpoints')) await checkWebhookEndpoints(call, check, expectAnswer, auth, prefix);
  return results;
}

/**
 * The webhook endpoint operations (3.2), without making one (an endpoint made here would be sent
 * the deployment's events): the list; every operation on an id no endpoint has, a 404; an endpoint
 * at a URL no deployment takes, a 400 that makes nothing.
 */
async function checkWebhookEndpoints(
  call: Call,
  check: Check,
  expectAnswer: ExpectAnswer,
  auth: Record<string, string>,
  prefix: string,
): Promise<void> {
  await check('listWebhookEndpoints: 200, a page of endpoints, none with its secret', async () => {
    const answer = await call('GET', `${prefix}/webhook-endpoints?limit=10`, auth);
    return expectAnswer(answer, 200, 'listWebhookEndpoints') ?? (answer.text.includes('whsec_') ? 'a secret is shown in the list' : null);
  });
  await check('createWebhookEndpoint at an ftp: URL: 400 Error', async () =>
    expectAnswer(
      await call('POST', `${prefix}/webhook-endpoints`, auth, { url: 'ftp://contract-check.invalid/' }),
      400,
      'createWebhookEndpoint',
    ),
  );
  const missing = `${prefix}/webhook-endpoints/we_000000000contractcheck`;
  const unknownEndpoint: Array<[string, string, string, unknown]> = [
    ['GET', missing, 'getWebhookEndpoint', undefined],
    ['PATCH', missing, 'updateWebhookEndpoint', { status: 'enabled' }],
    ['DELETE', missing, 'deleteWebhookEndpoint', undefined],
    ['POST', `${missing}/rotate-secret`, 'rotateWebhookEndpointSecret', undefined],
    ['GET', `${missing}/deliveries`, 'listWebhookDeliveries', undefined],
    ['POST', `${missing}/replay`, 'replayWebhookEvents', { since: '2026-01-01T00:00:00Z' }],
  ];
  for (const [method, path, operationId, body] of unknownEndpoint) {
    await check(`${operationId} of an unknown endpoint: 404 Error`, async () =>
      expectAnswer(await call(method, path, auth, body), 404, operationId),
    );
  }
}

/**
 * A placement (v3.1): without an Idempotency-Key, a 400 that places nothing; a ship of an unknown
 * order, a 404. With `writes`: an order placed (201 at its Location), the same request again
 * answered byte for byte, the key with another body a 422, and the order shipped (200, then 409).
 */
async function checkPlacement(
  call: Call,
  check: Check,
  expectAnswer: ExpectAnswer,
  auth: Record<string, string>,
  prefix: string,
  writes: boolean,
  unknown: number,
): Promise<void> {
  const order = { petId: 1, quantity: 1, shipDate: new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString() };
  await check('placeOrder without an Idempotency-Key: 400 Error', async () =>
    expectAnswer(await call('POST', `${prefix}/store/orders`, auth, order), 400, 'placeOrder'),
  );
  await check('shipOrder of an unknown order: 404 Error', async () =>
    expectAnswer(await call('POST', `${prefix}/store/orders/${unknown}/ship`, auth), 404, 'shipOrder'),
  );
  if (!writes) return;
  const key = { ...auth, 'Idempotency-Key': `contract-check-${globalThis.crypto.randomUUID()}` };
  let placed: number | undefined;
  await check('placeOrder: 201, a pending order at its Location; the same request again: the same answer, byte for byte', async () => {
    const first = await call('POST', `${prefix}/store/orders`, key, order);
    const problem = expectAnswer(first, 201, 'placeOrder');
    if (problem) return problem;
    if (!isRecord(first.body) || typeof first.body.id !== 'number' || first.body.status !== 'pending')
      return 'the body is not a pending order';
    placed = first.body.id;
    if (first.headers.location !== `${prefix}/store/orders/${placed}`) return `Location is ${JSON.stringify(first.headers.location)}`;
    const again = await call('POST', `${prefix}/store/orders`, key, order);
    return (
      expectAnswer(again, 201, 'placeOrder') ??
      (again.text === first.text && again.headers.location === first.headers.location ? null : 'the replay differs from the first answer')
    );
  });
  await check('placeOrder with the same Idempotency-Key and another body: 422 Error', async () =>
    expectAnswer(await call('POST', `${prefix}/store/orders`, key, { ...order, quantity: 2 }), 422, 'placeOrder'),
  );
  if (placed === undefined) return;
  const id = placed;
  await check(`shipOrder ${id} (the placed order): 200, shipped; again: 409 Error`, async () => {
    const shipped = await call('POST', `${prefix}/store/orders/${id}/ship`, auth);
    const problem = expectAnswer(shipped, 200, 'shipOrder');
    if (problem) return problem;
    if (!isRecord(shipped.body) || shipped.body.status !== 'shipped') return 'the body is not the shipped order';
    return expectAnswer(await call('POST', `${prefix}/store/orders/${id}/ship`, auth), 409, 'shipOrder');
  });
}

type Call = (method: string, path: string, headers?: Record<string, string>, json?: unknown) => Promise<Answer>;
type Check = (name: string, run: () => Promise<string | null>) => Promise<void>;
type ExpectAnswer = (answer: Answer, status: number, operationId: string | undefined) => string | null;
type Listed = Array<{ id: number; petId: number }>;

/** v1's list: the whole list, valid, with an ETag that revalidates to a 304. Returns the orders listed. */
async function checkV1List(call: Call, check: Check, expectAnswer: ExpectAnswer, auth: Record<string, string>): Promise<Listed> {
  let listed: Listed = [];
  let etag: string | undefined;
  await check('listOrders: 200, every order valid, with an ETag', async () => {
    const answer = await call('GET', '/v1/store/orders', auth);
    const problem = expectAnswer(answer, 200, 'listOrders');
    if (problem) return problem;
    listed = ordersIn(answer.body);
    etag = answer.headers.etag;
    return etag ? null : 'no ETag header';
  });
  await check('listOrders with its own ETag in If-None-Match: 304, no body', async () => {
    if (!etag) return 'no ETag to revalidate with';
    const answer = await call('GET', '/v1/store/orders', { ...auth, 'If-None-Match': etag });
    return expectAnswer(answer, 304, 'listOrders');
  });
  return listed;
}

/**
 * The paged list of v2 on: pages of two, valid, with a Link to the next page that its cursor reads (ids rising);
 * a cursor that was altered, a limit out of range and, where the document refuses them, an
 * undeclared parameter are 400 Errors. Returns the orders of the pages read.
 */
async function checkPagedList(
  call: Call,
  check: Check,
  expectAnswer: ExpectAnswer,
  auth: Record<string, string>,
  document: OpenAPIV3.Document,
  prefix: string,
): Promise<Listed> {
  const listed: Listed = [];
  // An object, so that what the first check's callback sets is read as it is, not as the null it started as.
  const first: { cursor: string | null } = { cursor: null };
  await check('listOrders: 200, a page of valid orders, with a Link to the next page when there is one', async () => {
    const answer = await call('GET', `${prefix}/store/orders?limit=2`, auth);
    const problem = expectAnswer(answer, 200, 'listOrders');
    if (problem) return problem;
    listed.push(...ordersIn(answer.body));
    const cursor = isRecord(answer.body) && typeof answer.body.nextCursor === 'string' ? answer.body.nextCursor : null;
    first.cursor = cursor;
    const link = answer.headers.link;
    if (cursor === null) return link === undefined ? null : `a Link header on the last page: ${link}`;
    const expected = `<${prefix}/store/orders?limit=2&cursor=${encodeURIComponent(cursor)}>; rel="next"`;
    return link === expected ? null : `Link is ${JSON.stringify(link)}, expected ${JSON.stringify(expected)}`;
  });
  const { cursor } = first;
  if (cursor !== null) {
    await check("listOrders with the page's nextCursor: 200, the next orders by id", async () => {
      const answer = await call('GET', `${prefix}/store/orders?limit=2&cursor=${encodeURIComponent(cursor)}`, auth);
      const problem = expectAnswer(answer, 200, 'listOrders');
      if (problem) return problem;
      const next = ordersIn(answer.body);
      const last = listed[listed.length - 1]?.id;
      if (last === undefined) return 'the first page had a next cursor but no orders';
      listed.push(...next);
      return next.length > 0 && next.every((order) => order.id > last) ? null : `the next page does not follow id ${last}`;
    });
  }
  await check('listOrders with an altered cursor: 400 Error', async () => {
    const altered = cursor === null ? 'contract-check.not-a-cursor' : `${cursor.slice(0, -1)}${cursor.endsWith('A') ? 'B' : 'A'}`;
    return expectAnswer(await call('GET', `${prefix}/store/orders?limit=2&cursor=${encodeURIComponent(altered)}`, auth), 400, 'listOrders');
  });
  await check('listOrders with limit=0: 400 Error', async () =>
    expectAnswer(await call('GET', `${prefix}/store/orders?limit=0`, auth), 400, 'listOrders'),
  );
  if (undeclaredQueryPolicy(document) === 'reject') {
    await check('listOrders with an undeclared query parameter: 400 Error', async () =>
      expectAnswer(await call('GET', `${prefix}/store/orders?contractCheck=1`, auth), 400, 'listOrders'),
    );
  }
  return listed;
}

/** The read of one order (v2 on): a listed one, valid, with an ETag that revalidates to a 304; an unknown one, a 404; a malformed id, a 400. */
async function checkGetOrder(
  call: Call,
  check: Check,
  expectAnswer: ExpectAnswer,
  auth: Record<string, string>,
  listed: Listed,
  unknown: number,
  prefix: string,
) {
  const known = listed[0]?.id;
  if (known !== undefined) {
    await check(`getOrderById ${known}: 200, the order, with an ETag that answers 304 in If-None-Match`, async () => {
      const answer = await call('GET', `${prefix}/store/orders/${known}`, auth);
      const problem = expectAnswer(answer, 200, 'getOrderById');
      if (problem) return problem;
      if (!isRecord(answer.body) || answer.body.id !== known) return `the body is not order ${known}`;
      const etag = answer.headers.etag;
      if (etag === undefined) return 'no ETag';
      return expectAnswer(await call('GET', `${prefix}/store/orders/${known}`, { ...auth, 'If-None-Match': etag }), 304, 'getOrderById');
    });
  }
  await check('getOrderById of an unknown order: 404 Error', async () =>
    expectAnswer(await call('GET', `${prefix}/store/orders/${unknown}`, auth), 404, 'getOrderById'),
  );
  await check('getOrderById with a malformed id: 400 Error', async () =>
    expectAnswer(await call('GET', `${prefix}/store/orders/042`, auth), 400, 'getOrderById'),
  );
}

/**
 * The change feed (v2 on): from the latest, an empty page whose cursor reads on; from the oldest, a page
 * whose cursor reads on; an altered cursor and a wait out of range, 400s. Returns the latest cursor.
 */
async function checkEventFeed(
  call: Call,
  check: Check,
  expectAnswer: ExpectAnswer,
  auth: Record<string, string>,
  prefix: string,
): Promise<string | undefined> {
  const cursorOf = (answer: Answer): string | undefined =>
    isRecord(answer.body) && typeof answer.body.nextCursor === 'string' ? answer.body.nextCursor : undefined;
  let latest: string | undefined;
  await check('listOrderEvents from=latest: 200, an empty page whose cursor reads on', async () => {
    const answer = await call('GET', `${prefix}/store/order-events?from=latest`, auth);
    const problem = expectAnswer(answer, 200, 'listOrderEvents');
    if (problem) return problem;
    latest = cursorOf(answer);
    if (latest === undefined) return 'no nextCursor';
    return expectAnswer(
      await call('GET', `${prefix}/store/order-events?after=${encodeURIComponent(latest)}`, auth),
      200,
      'listOrderEvents',
    );
  });
  await check('listOrderEvents from the oldest: 200, a page whose cursor reads on', async () => {
    const answer = await call('GET', `${prefix}/store/order-events?limit=2`, auth);
    const problem = expectAnswer(answer, 200, 'listOrderEvents');
    if (problem) return problem;
    const cursor = cursorOf(answer);
    if (cursor === undefined) return 'no nextCursor';
    return expectAnswer(
      await call('GET', `${prefix}/store/order-events?limit=2&after=${encodeURIComponent(cursor)}`, auth),
      200,
      'listOrderEvents',
    );
  });
  await check('listOrderEvents with an altered cursor, or a wait past 30 s: 400 Error', async () => {
    const altered = (latest ?? 'e30').replace(/.$/, (last) => (last === 'A' ? 'B' : 'A'));
    return (
      expectAnswer(await call('GET', `${prefix}/store/order-events?after=${encodeURIComponent(altered)}`, auth), 400, 'listOrderEvents') ??
      expectAnswer(await call('GET', `${prefix}/store/order-events?wait=31`, auth), 400, 'listOrderEvents')
    );
  });
  return latest;
}

/** The orders of a body the contract check passed: v1's array of orders, or a v2 page's `orders`. */
/**
 * What to do about an answer that refused the key's scope (v3's 403, or v1's and v2's 401 naming
 * it): a key with every scope the version declares. Empty for any other answer.
 */
function scopeAdvice(answer: Answer, version: string, document: OpenAPIV3.Document): string {
  const challenge = answer.headers['www-authenticate'] ?? '';
  const lacked = /error="insufficient_scope", scope="([^"]+)"/.exec(challenge)?.[1];
  if (lacked === undefined) return '';
  return ` (the key lacks the scope ${lacked}: contract-check needs a key with every scope ${version} declares: ${scopesOf([document]).join(',')})`;
}

function ordersIn(body: unknown): Listed {
  const items: unknown[] = Array.isArray(body) ? body : isRecord(body) && Array.isArray(body.orders) ? body.orders : [];
  return items.filter(isRecord).flatMap(({ id, petId }) => (typeof id === 'number' && typeof petId === 'number' ? [{ id, petId }] : []));
}

/** The readable report: one line per check, then a summary. */
export function formatReport(baseUrl: string, results: CheckResult[]): string {
  const failed = results.filter((result) => !result.ok).length;
  const lines = results.map((result) => (result.ok ? `PASS  ${result.name}` : `FAIL  ${result.name}\n      ${result.problem}`));
  lines.push('', `${results.length} checks against ${baseUrl}: ${results.length - failed} passed, ${failed} failed`);
  return `${lines.join('\n')}\n`;
}
