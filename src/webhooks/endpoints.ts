import { randomBytes } from 'node:crypto';
import type { components } from '../../generated/openapi-v3';
import type { AttemptRecord, EndpointChanges, EndpointRecord, Store, WebhookEventType } from '../store';
import { destinationOf, systemResolve, urlProblem, type AddressRules, type Resolve } from './addresses';
import { newSecret } from './signature';

// The webhook endpoints as the API and the CLI manage them: made with a checked URL and a new
// secret, read without it, changed, rotated, removed, and their delivery log and replay. Each
// answers an outcome; the handlers (src/handlers/v3) and the CLI turn it into their replies.

/** An endpoint as the document's WebhookEndpoint shows it: never its secret. */
export type EndpointView = components['schemas']['WebhookEndpoint'];
/** An endpoint with its secret, as it is made or rotated: the only times the secret is shown. */
export type EndpointWithSecret = components['schemas']['WebhookEndpointWithSecret'];
/** One attempt, as the document's WebhookDelivery shows it. */
export type DeliveryView = components['schemas']['WebhookDelivery'];

/** How long a rotated-out secret signs beside the new one. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/** What a URL check needs: the deployment's rules, and the resolver (the system's, unless a test gives one). */
export interface UrlRules {
  readonly rules: AddressRules;
  readonly resolve?: Resolve;
}

/** Why a URL cannot be an endpoint's now, naming the rule; undefined when it can. Its host's every address is checked. */
export async function endpointUrlProblem(url: string, { rules, resolve = systemResolve }: UrlRules): Promise<string | undefined> {
  const problem = urlProblem(url, rules);
  if (problem !== undefined) return problem;
  const destination = await destinationOf(new URL(url), rules, resolve);
  return 'refused' in destination ? `url: ${destination.refused}` : undefined;
}

const ALPHANUMERIC = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A new endpoint id: `we_`, the time in base 36 (so ids sort as they were made), and 12 random characters. */
export function newEndpointId(now = Date.now()): string {
  const random = [...randomBytes(12)].map((byte) => ALPHANUMERIC[byte % ALPHANUMERIC.length]).join('');
  return `we_${now.toString(36).padStart(9, '0')}${random}`;
}

/** The endpoint as the API shows it. */
export function endpointView(endpoint: EndpointRecord): EndpointView {
  return {
    id: endpoint.id,
    url: endpoint.url,
    ...(endpoint.eventTypes === null ? {} : { events: [...endpoint.eventTypes] }),
    ...(endpoint.description === null ? {} : { description: endpoint.description }),
    status: endpoint.status,
    ...(endpoint.status === 'disabled' && endpoint.disabledReason !== null ? { disabledReason: endpoint.disabledReason } : {}),
    createdAt: endpoint.createdAt,
  };
}

/** One attempt as the API shows it. */
export function deliveryView(attempt: AttemptRecord): DeliveryView {
  return {
    eventId: attempt.eventId,
    attempt: attempt.attempt,
    at: attempt.at,
    ...(attempt.status === null ? {} : { status: attempt.status }),
    ...(attempt.error === null ? {} : { error: attempt.error }),
    durationMs: attempt.durationMs,
    outcome: attempt.outcome,
  };
}

/** What making or changing an endpoint came to. */
export type EndpointOutcome<T> = { readonly done: T } | { readonly refused: string } | { readonly missing: true };

/** A new endpoint: its URL checked, a new id and secret, and its cursor at the feed's latest position. */
export async function createEndpoint(
  store: Store,
  given: { url: string; events?: readonly WebhookEventType[] | undefined; description?: string | undefined },
  urls: UrlRules,
): Promise<EndpointOutcome<EndpointWithSecret>> {
  const problem = await endpointUrlProblem(given.url, urls);
  if (problem !== undefined) return { refused: problem };
  const secret = newSecret();
  const made = await store.webhooks.createEndpoint({
    id: newEndpointId(),
    url: given.url,
    eventTypes: given.events === undefined ? null : [...given.events],
    description: given.description ?? null,
    secret,
    createdAt: new Date().toISOString(),
    cursor: await store.latestEventPosition(),
  });
  return { done: { ...endpointView(made), secret } };
}

/** A change to an endpoint, its new URL checked as when it is made. */
export async function updateEndpoint(
  store: Store,
  id: string,
  changes: EndpointChanges,
  urls: UrlRules,
): Promise<EndpointOutcome<EndpointView>> {
  if (changes.url !== undefined) {
    const problem = await endpointUrlProblem(changes.url, urls);
    if (problem !== undefined) return { refused: problem };
  }
  const changed = await store.webhooks.updateEndpoint(id, changes);
  return changed === null ? { missing: true } : { done: endpointView(changed) };
}

/** A new secret for an endpoint; the old one signs beside it for ROTATION_GRACE_MS. */
export async function rotateSecret(store: Store, id: string): Promise<EndpointOutcome<EndpointWithSecret>> {
  const secret = newSecret();
  const rotated = await store.webhooks.rotateEndpointSecret(id, secret, new Date(Date.now() + ROTATION_GRACE_MS).toISOString());
  return rotated === null ? { missing: true } : { done: { ...endpointView(rotated), secret } };
}

/** A page of endpoints after id `after`, and where the next starts (null after the last). */
export async function endpointPage(
  store: Store,
  after: string | undefined,
  limit: number,
): Promise<{ endpoints: EndpointView[]; nextCursor: string | null }> {
  const endpoints = await store.webhooks.listEndpoints(after ?? '', limit);
  const last = endpoints.at(-1);
  return { endpoints: endpoints.map(endpointView), nextCursor: endpoints.length === limit && last !== undefined ? last.id : null };
}

/** A page of an endpoint's delivery log, newest first, before log position `after`; null when no endpoint has that id. */
export async function deliveryPage(
  store: Store,
  id: string,
  after: number | undefined,
  limit: number,
): Promise<{ deliveries: DeliveryView[]; nextCursor: string | null } | null> {
  if ((await store.webhooks.getEndpoint(id)) === null) return null;
  const attempts = await store.webhooks.attempts(id, after, limit);
  const last = attempts.at(-1);
  return { deliveries: attempts.map(deliveryView), nextCursor: attempts.length === limit && last !== undefined ? String(last.seq) : null };
}
