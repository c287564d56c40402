import { Webhook } from 'standardwebhooks';
import {
  newSecret,
  secretBytes,
  signedHeaders,
  verifySignature,
  WebhookVerificationError,
  WEBHOOK_HEADERS,
} from '../../src/webhooks/signature';

// Standard Webhooks signatures: what the service signs, a receiver using the spec's own library
// verifies unchanged, and this project's verifier agrees with it on every case.
const body = JSON.stringify({ id: 'evt_42', type: 'order.created', order: { id: 42, status: 'pending' } });
const now = Math.floor(Date.now() / 1000);

test('a new secret is whsec_ and base64 of 32 random bytes, each one different', () => {
  const [one, two] = [newSecret(), newSecret()];
  expect(one).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  expect(secretBytes(one)).toHaveLength(32);
  expect(one).not.toBe(two);
  expect(secretBytes('whsec_c2hvcnQ=')).toBeUndefined(); // five bytes
  expect(secretBytes('whsec_not base64!')).toBeUndefined();
});

test("the standardwebhooks library verifies the service's headers unchanged, and refuses an altered body or timestamp", () => {
  const secret = newSecret();
  const headers = signedHeaders([secret], 'evt_42', now, body);
  expect(Object.keys(headers)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
  expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));

  expect(() => new Webhook(secret).verify(body.replace('pending', 'shipped'), headers)).toThrow();
  expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-timestamp': String(now + 1) })).toThrow();
  expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
});

test('while a secret is rotated, each attempt carries both signatures, and a receiver holding either verifies it', () => {
  const [current, previous] = [newSecret(), newSecret()];
  const headers = signedHeaders([current, previous], 'evt_7', now, body);
  expect(headers[WEBHOOK_HEADERS.signature]).toMatch(/^v1,\S+ v1,\S+$/);
  expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
  expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
  expect(verifySignature(previous, headers, body)).toEqual(JSON.parse(body));
});

test('verifySignature accepts what the library signs, and says which check failed on what it refuses', () => {
  const secret = newSecret();
  const librarySigned = {
    'webhook-id': 'evt_9',
    'webhook-timestamp': String(now),
    'webhook-signature': new Webhook(secret).sign('evt_9', new Date(now * 1000), body),
  };
  expect(verifySignature(secret, librarySigned, body)).toEqual(JSON.parse(body));
  // fetch's Headers, and node:http's headers in any case, are read alike.
  expect(verifySignature(secret, new Headers(librarySigned), Buffer.from(body))).toEqual(JSON.parse(body));
  expect(
    verifySignature(
      secret,
      { 'Webhook-Id': 'evt_9', 'WEBHOOK-TIMESTAMP': String(now), 'webhook-signature': librarySigned['webhook-signature'] },
      body,
    ),
  ).toEqual(JSON.parse(body));

  const refusal = (run: () => unknown): string => {
    try {
      run();
    } catch (err) {
      expect(err).toBeInstanceOf(WebhookVerificationError);
      return (err as Error).message;
    }
    throw new Error('the delivery was accepted');
  };
  expect(refusal(() => verifySignature(secret, librarySigned, body.replace('42', '43')))).toBe(
    'no signature matches the body under this secret',
  );
  expect(refusal(() => verifySignature(newSecret(), librarySigned, body))).toBe('no signature matches the body under this secret');
  expect(refusal(() => verifySignature(secret, { ...librarySigned, 'webhook-signature': 'v2,abc' }, body))).toBe(
    'no signature matches the body under this secret',
  );
  expect(refusal(() => verifySignature(secret, { 'webhook-id': 'evt_9' }, body))).toBe(
    'the delivery lacks webhook-timestamp, webhook-signature',
  );
  expect(refusal(() => verifySignature(secret, { ...librarySigned, 'webhook-timestamp': 'soon' }, body))).toBe(
    'webhook-timestamp is not a whole number of seconds',
  );
  // A stale delivery is refused even when its signature matches: a replay of an old one.
  const old = signedHeaders([secret], 'evt_9', now - 301, body);
  // The clock is given, so the edges are exact: 300 s either way is accepted, 301 is not.
  const at = { now: () => now * 1000 };
  expect(refusal(() => verifySignature(secret, old, body, at))).toBe('webhook-timestamp is too old');
  expect(verifySignature(secret, old, body, { ...at, toleranceSeconds: 600 })).toEqual(JSON.parse(body));
  expect(verifySignature(secret, signedHeaders([secret], 'evt_9', now - 300, body), body, at)).toEqual(JSON.parse(body));
  const future = signedHeaders([secret], 'evt_9', now + 301, body);
  expect(refusal(() => verifySignature(secret, future, body, at))).toBe('webhook-timestamp is too far in the future');
});
