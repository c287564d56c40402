import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import { keptByText } from '../kept';

/**
 * Standard Webhooks (v1) signatures: what a delivery's three headers say, and how a receiver checks
 * them. The signed content is `{webhook-id}.{webhook-timestamp}.{body}`, its signature the base64 of
 * its HMAC-SHA256 under the secret's bytes, sent as `v1,<base64>`; several signatures (a secret
 * being rotated) are separated by spaces, and a receiver accepts any one that matches.
 */

/** What an endpoint's secret starts with; base64 of its bytes follows. */
export const SECRET_PREFIX = 'whsec_';
/** Bytes of a new secret (the spec allows 24 to 64). */
const SECRET_BYTES = 32;
/** The signature scheme this service signs with. */
const VERSION = 'v1';

/** The headers that carry a delivery's id, time and signatures, named as the spec names them. */
export const WEBHOOK_HEADERS = Object.freeze({
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
});

/** A new endpoint secret: `whsec_` and the base64 of 32 random bytes. */
export function newSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The key bytes of a secret, with or without its `whsec_` prefix; undefined when it is not base64 of 24 to 64 bytes. */
export function secretBytes(secret: string): Buffer | undefined {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(encoded, 'base64');
  return bytes.length >= 24 && bytes.length <= 64 ? bytes : undefined;
}

function signatureOf(key: Buffer | KeyObject, id: string, timestamp: number | string, body: string): string {
  return createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

/**
 * The `webhook-signature` header of one attempt: one `v1,` signature per secret, in the order given
 * (the current secret first, then one being rotated out), separated by spaces.
 */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map((secret) => `${VERSION},${signatureOf(signingKey(secret), id, timestamp, body)}`).join(' ');
}

/** The signing keys of the last 1,000 secrets, made once each: a key made for every signature cost more than its HMAC. */
const signingKeys = keptByText<KeyObject>(1000);

function signingKey(secret: string): KeyObject {
  return signingKeys(secret, newSigningKey);
}

function newSigningKey(secret: string): KeyObject {
  const bytes = secretBytes(secret);
  if (bytes === undefined) throw new Error('an endpoint secret is not whsec_ and base64 of 24 to 64 bytes');
  return createSecretKey(bytes);
}

/** The three headers of one attempt to deliver `body` as event `id`, signed at `timestamp` (Unix seconds). */
export function signedHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    [WEBHOOK_HEADERS.id]: id,
    [WEBHOOK_HEADERS.timestamp]: String(timestamp),
    [WEBHOOK_HEADERS.signature]: signatureHeader(secrets, id, timestamp, body),
  };
}

/** Why a delivery was not accepted as signed by the secret: the message says which check failed. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** Headers as a receiver has them: a plain object (node:http's, any case) or a fetch `Headers`. */
export type ReceivedHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

function header(headers: ReceivedHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return typeof value === 'string' ? value : value?.join(', ');
  }
  return undefined;
}

/**
 * Checks a received delivery: its three headers are present, its timestamp is within
 * `toleranceSeconds` of now (either way: a replayed old delivery is refused), and one of its `v1`
 * signatures is the body's under `secret`, compared in constant time. Returns the body parsed as
 * JSON; throws a WebhookVerificationError that says which check failed.
 */
export function verifySignature(
  secret: string,
  headers: ReceivedHeaders,
  body: string | Uint8Array,
  options: { toleranceSeconds?: number; now?: () => number } = {},
): unknown {
  const toleranceSeconds = options.toleranceSeconds ?? 300;
  const id = header(headers, WEBHOOK_HEADERS.id);
  const timestamp = header(headers, WEBHOOK_HEADERS.timestamp);
  const signatures = header(headers, WEBHOOK_HEADERS.signature);
  if (id === undefined || timestamp === undefined || signatures === undefined) {
    throw new WebhookVerificationError(
      `the delivery lacks ${[
        id === undefined ? WEBHOOK_HEADERS.id : '',
        timestamp === undefined ? WEBHOOK_HEADERS.timestamp : '',
        signatures === undefined ? WEBHOOK_HEADERS.signature : '',
      ]
        .filter(Boolean)
        .join(', ')}`,
    );
  }
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError(`${WEBHOOK_HEADERS.timestamp} is not a whole number of seconds`);
  const nowSeconds = Math.floor((options.now?.() ?? Date.now()) / 1000);
  const sent = Number(timestamp);
  if (sent < nowSeconds - toleranceSeconds) throw new WebhookVerificationError(`${WEBHOOK_HEADERS.timestamp} is too old`);
  if (sent > nowSeconds + toleranceSeconds) throw new WebhookVerificationError(`${WEBHOOK_HEADERS.timestamp} is too far in the future`);
  const key = secretBytes(secret);
  if (key === undefined) throw new WebhookVerificationError('the secret is not whsec_ and base64 of 24 to 64 bytes');
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  const expected = Buffer.from(signatureOf(key, id, timestamp, text), 'base64');
  const matched = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    if (version !== VERSION || signature === undefined) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matched) throw new WebhookVerificationError('no signature matches the body under this secret');
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed;
  } catch {
    throw new WebhookVerificationError('the body is not JSON');
  }
}
