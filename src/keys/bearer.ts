import type { MaybePromise } from '../maybe-promise';
import type { Store } from '../store';
import { hashKey, parseBearer } from './keys';

/** What a bearer credential turned out to be: the name of the active key it is, or why it is none. */
export type BearerResult = { keyName: string } | { error: 'missing' | 'invalid' | Error };

const found = (keyName: string | null): BearerResult => (keyName === null ? { error: 'invalid' } : { keyName });
const failed = (err: unknown): BearerResult => ({ error: err instanceof Error ? err : new Error(String(err)) });

/**
 * The check of an `Authorization: Bearer <key>` header against the store's active keys. A store
 * that answers in-process answers at once, so a request's key check then takes no turn of the event
 * loop; a store that cannot be asked gives its error, never a refusal.
 */
export function bearerCheck(
  store: Pick<Store, 'findActiveKey'>,
): (authorization: string | string[] | undefined) => MaybePromise<BearerResult> {
  return (authorization) => {
    const token = parseBearer(authorization);
    if (token === null) return { error: 'missing' };
    let keyName: MaybePromise<string | null>;
    try {
      keyName = store.findActiveKey(hashKey(token));
    } catch (err) {
      return failed(err);
    }
    return keyName instanceof Promise ? keyName.then(found, failed) : found(keyName);
  };
}
