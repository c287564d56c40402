import { timingSafeEqual, createHash } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DropReason } from './log-output';

/** The service's Prometheus metrics, in a registry of their own. */
export interface Metrics {
  readonly registry: Registry;
  /**
   * Records one finished request. `operation` is its operationId, or the endpoint's name outside
   * the contract; `apiVersion` the version that answered it (`none` outside the contract).
   */
  observe(operation: string, method: string, status: number, seconds: number, apiVersion?: string): void;
  /** Counts a reply the contract check stopped (a 500 sent instead, or a streamed list cut). */
  violation(operation: string, apiVersion: string): void;
  /** Counts a call to an operation the document marks deprecated, whatever its answer. */
  deprecatedCall(operation: string, apiVersion: string): void;
  /** Counts the events this process committed, by event type. */
  eventsWritten(counts: Readonly<Record<string, number | undefined>>): void;
  /** Sets the number of requests waiting for events. */
  eventWaits(count: number): void;
  /** Counts a request shed by admission control: a 503 before its handler ran. */
  shed(operation: string): void;
  /** Sets the number of expensive requests (lists, pages) running. */
  admitted(count: number): void;
  /** Sets the number of expensive requests waiting for their turn. */
  admissionWaiting(count: number): void;
  /** Records how long an expensive request waited for its turn. */
  admissionWait(seconds: number): void;
  /** Counts a request refused for its key's sake: the key expired or was revoked. */
  authRefusal(reason: AuthRefusalReason): void;
  /** Counts what a placement (placeOrder) came to: the store's PlaceOutcome, which this floor does not import. */
  placement(outcome: string): void;
  /** Counts one webhook attempt by what it came to: delivered, retrying, failed or refused. */
  webhookAttempt(outcome: string): void;
  /** Sets how old, in seconds, the oldest event still to reach an endpoint is (0 when it has them all). */
  webhookLag(endpointId: string, seconds: number): void;
  /** Forgets an endpoint's lag: this instance no longer delivers to it. */
  webhookLagGone(endpointId: string): void;
  /** Sets the number of webhook endpoints that are disabled. */
  webhookEndpointsDisabled(count: number): void;
  /** Whether a request may read /metrics: always without a token, else only with `Bearer <token>`. */
  allowed(authorization: string | undefined): boolean;
}

/**
 * Why a request with a known key was refused: it expired, it was revoked, it lacks the operation's
 * scope, or it has spent its rate limit. An unknown or missing key is not counted: anyone can send one.
 */
export type AuthRefusalReason = 'expired' | 'revoked' | 'scope' | 'limit';

/** Seconds: from a fast 404 to a million-order list. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Creates the metrics: request counts and a duration histogram by operation, method and status,
 * plus Node's process metrics when `processMetrics` is set (one per process: the server's).
 */
export function createMetrics(
  options: { processMetrics?: boolean; token?: string | undefined; logDrops?: () => Readonly<Record<DropReason, number>> } = {},
): Metrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  const labelNames = ['api_version', 'operation', 'method', 'status'] as const;
  const durationName = 'petstore_http_request_duration_seconds';
  const duration = new Histogram({
    name: durationName,
    help: 'Time from receiving a request to finishing its response, by API version, operationId (or endpoint), method and status',
    labelNames,
    buckets: BUCKETS,
    registers: [registry],
  });
  new Counter({
    name: 'petstore_http_requests_total',
    help: 'HTTP requests answered, by API version, operationId (or endpoint), method and status',
    labelNames,
    registers: [registry],
    // The histogram counts every request it times, by the same labels: the counter is read from it
    // when scraped, so that a request updates one metric, not two.
    async collect() {
      const { values } = await duration.get();
      this.reset();
      for (const { metricName, labels, value } of values) if (metricName === `${durationName}_count`) this.inc(labels, value);
    },
  });
  const violations = new Counter({
    name: 'petstore_contract_violations_total',
    help: 'Replies the contract check stopped: a 500 sent instead, or a streamed list cut, by API version and operationId',
    labelNames: ['api_version', 'operation'] as const,
    registers: [registry],
  });
  const deprecatedCalls = new Counter({
    name: 'petstore_deprecated_requests_total',
    help: 'Calls to operations the document marks deprecated, by API version and operationId: who still depends on one before its sunset',
    labelNames: ['api_version', 'operation'] as const,
    registers: [registry],
  });
  const events = new Counter({
    name: 'petstore_order_events_total',
    help: 'Change-feed events this process committed, by type: its cancels, ships and imports',
    labelNames: ['type'] as const,
    registers: [registry],
  });
  const waits = new Gauge({
    name: 'petstore_order_event_waits',
    help: 'Requests waiting now for change-feed events (GET /v2/store/order-events with wait)',
    registers: [registry],
  });
  const shed = new Counter({
    name: 'petstore_requests_shed_total',
    help: 'Requests shed by admission control, by operationId: a 503 with Retry-After, sent before the handler ran',
    labelNames: ['operation'] as const,
    registers: [registry],
  });
  const admitted = new Gauge({
    name: 'petstore_admitted_requests',
    help: 'Expensive requests (lists and pages) running now, at most PETSTORE_ADMISSION_LIMIT',
    registers: [registry],
  });
  const admissionWaiting = new Gauge({
    name: 'petstore_admission_waiting_requests',
    help: 'Expensive requests (lists and pages) waiting now for their turn, at most PETSTORE_ADMISSION_QUEUE',
    registers: [registry],
  });
  const admissionWait = new Histogram({
    name: 'petstore_admission_wait_seconds',
    help: 'How long an expensive request (a list, a page) waited for its turn before it ran',
    buckets: [0, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [registry],
  });
  const authRefusals = new Counter({
    name: 'petstore_auth_refusals_total',
    help: 'Requests refused for their key: "expired" after its expiry, "revoked" after its revocation, "scope" without the operation\'s scope, "limit" over its rate limit',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const placements = new Counter({
    name: 'petstore_placements_total',
    help: 'Placements by what they came to: "placed" a new order, "replayed" a retry given the first answer, "reused" a key sent with another body (422), "in_use" a key whose first placement was running (409)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const webhookAttempts = new Counter({
    name: 'petstore_webhook_deliveries_total',
    help: 'Webhook attempts by what they came to: "delivered" (a 2xx), "retrying" (failed; tried again), "failed" (failed; not tried again), "refused" (not sent: an address the rules refuse)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const webhookLag = new Gauge({
    name: 'petstore_webhook_oldest_undelivered_seconds',
    help: 'For each webhook endpoint this instance delivers to, how old the oldest event still to reach it is (0 when it has them all)',
    labelNames: ['endpoint'] as const,
    registers: [registry],
  });
  const webhooksDisabled = new Gauge({
    name: 'petstore_webhook_endpoints_disabled',
    help: 'Webhook endpoints disabled (by hand, by a 410, or after five days of failures): nothing is sent to them until they are enabled',
    registers: [registry],
  });
  const { logDrops } = options;
  if (logDrops !== undefined) {
    new Counter({
      name: 'petstore_log_lines_dropped_total',
      help: 'Log lines not written: "full" while the log destination did not keep up, "failed" after it failed',
      labelNames: ['reason'] as const,
      registers: [registry],
      // Read from the log output when scraped, so that logging itself never touches a metric.
      collect() {
        const dropped = logDrops();
        this.reset();
        this.inc({ reason: 'full' }, dropped.full);
        this.inc({ reason: 'failed' }, dropped.failed);
      },
    });
  }
  const expected = options.token === undefined ? undefined : createHash('sha256').update(`Bearer ${options.token}`).digest();
  return {
    registry,
    observe: (operation, method, status, seconds, apiVersion = 'none') => {
      duration.observe({ api_version: apiVersion, operation, method, status: String(status) }, seconds);
    },
    violation: (operation, apiVersion) => violations.inc({ api_version: apiVersion, operation }),
    deprecatedCall: (operation, apiVersion) => deprecatedCalls.inc({ api_version: apiVersion, operation }),
    eventsWritten: (counts) => {
      for (const [type, count] of Object.entries(counts)) events.inc({ type }, count);
    },
    eventWaits: (count) => waits.set(count),
    shed: (operation) => shed.inc({ operation }),
    admitted: (count) => admitted.set(count),
    admissionWaiting: (count) => admissionWaiting.set(count),
    admissionWait: (seconds) => admissionWait.observe(seconds),
    authRefusal: (reason) => authRefusals.inc({ reason }),
    placement: (outcome) => placements.inc({ outcome }),
    webhookAttempt: (outcome) => webhookAttempts.inc({ outcome }),
    webhookLag: (endpoint, seconds) => webhookLag.set({ endpoint }, seconds),
    webhookLagGone: (endpoint) => webhookLag.remove({ endpoint }),
    webhookEndpointsDisabled: (count) => webhooksDisabled.set(count),
    // Compared by hash, in constant time, so the comparison leaks nothing about the token.
    allowed: (authorization) =>
      expected === undefined ||
      (authorization !== undefined && timingSafeEqual(createHash('sha256').update(authorization).digest(), expected)),
  };
}
