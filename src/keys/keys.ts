import { hash, randomBytes } from 'node:crypto';

/** Every key starts with this, so that a leaked key is recognisable in logs and scanners. */
export const KEY_PREFIX = 'pso_';

/** A new API key: the prefix and 256 random bits, base64url-encoded. */
export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** The stored form of a key: its SHA-256, hex. Keys are random, so a fast hash is enough. */
export function hashKey(key: string): string {
  // The one-shot hash, cheaper than a createHash object for one short input: it runs on every keyed request.
  return hash('sha256', key, 'hex');
}

const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Checks a key name; returns a message naming the problem, or null when it is fine. */
export function keyNameProblem(name: string): string | null {
  return KEY_NAME.test(name)
    ? null
    : `--name must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit; got "${name}"`;
}

// RFC 9110 §11.4 credentials with an RFC 6750 token68; the scheme name is case-insensitive.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The token of an `Authorization: Bearer <token>` header, or null when there is none. */
export function parseBearer(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  return BEARER.exec(header)?.[1] ?? null;
}
