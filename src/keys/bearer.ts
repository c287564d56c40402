import { isoNow } from '../date-time';
import type { MaybePromise } from '../maybe-promise';
import type { KeyMatch, KeyStore } from '../store';
import { hashKey, parseBearer } from './keys';
import type { Policy } from '../rate-policy';

/**
 * Why a request's key was refused: none was sent, none has it, it has expired, or it was revoked.
 * An expired key's refusal says so; a revoked one's reads as an unknown key's.
 */
export type KeyRefusal = 'missing' | 'invalid' | 'expired' | 'revoked';

/**
 * What a bearer credential turned out to be: the active key it is (its name, its scopes, and its
 * rate-limit policies, null for the deployment's), or why it is none.
 */
export type BearerResult =
  { keyName: string; scopes: ReadonlySet<string>; policies: readonly Policy[] | null } | { error: KeyRefusal | Error };

const found = (match: KeyMatch | null): BearerResult => {
  if (match === null) return { error: 'invalid' };
  return match.state === 'active' ? { keyName: match.name, scopes: match.scopes, policies: match.policies } : { error: match.state };
};
const failed = (err: unknown): BearerResult => ({ error: err instanceof Error ? err : new Error(String(err)) });

/**
 * The check of an `Authorization: Bearer <key>` header against the store's active keys. A store
 * that answers in-process answers at once, so a request's key check then takes no turn of the event
 * loop; a store that cannot be asked gives its error, never a refusal.
 */
export function bearerCheck(
  store: Pick<KeyStore, 'findKey'>,
): (authorization: string | string[] | undefined) => MaybePromise<BearerResult> {
  return (authorization) => {
    const token = parseBearer(authorization);
    if (token === null) return { error: 'missing' };
    let match: MaybePromise<KeyMatch | null>;
    try {
      match = store.findKey(hashKey(token), isoNow());
    } catch (err) {
      return failed(err);
    }
    return match instanceof Promise ? match.then(found, failed) : found(match);
  };
}
