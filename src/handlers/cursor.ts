import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../errors';
import { isRecord } from '../records';

/**
 * Cursors of a keyset list: opaque to clients, tamper-evident, and bound to the query that made
 * them. A cursor is `<payload>.<mac>`, both base64url: the payload holds the last id of the page
 * and a digest of the query's filters and limit (its binding); the mac is an HMAC-SHA256 of the
 * payload under the store's secret, so every instance sharing the store accepts it, and it never
 * expires. Reading one checks the mac first (an altered or truncated cursor), then the binding
 * (a cursor sent with other filters), each a 400 that names the parameter.
 */
export interface Cursors {
  /** The cursor of the page after the one that ended at `lastId`, for this binding. */
  make(lastId: number, binding: string): string;
  /** The last id a cursor carries, when it was made by this store for this binding; else a 400. */
  read(cursor: string, binding: string): number;
}

/** Cursors signed with a store's secret. */
export function cursors(secret: Buffer): Cursors {
  const mac = (payload: string): Buffer => createHmac('sha256', secret).update(payload).digest();
  const digest = (binding: string): string => createHash('sha256').update(binding).digest('base64url').slice(0, 16);
  return {
    make(lastId, binding) {
      const payload = Buffer.from(JSON.stringify({ after: lastId, query: digest(binding) })).toString('base64url');
      return `${payload}.${mac(payload).toString('base64url')}`;
    },
    read(cursor, binding) {
      const [payload = '', signature = '', extra] = cursor.split('.');
      // Compared as text, so that no other spelling of the same bytes passes.
      const given = Buffer.from(signature);
      const expected = Buffer.from(mac(payload).toString('base64url'));
      if (extra !== undefined || given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new ApiError('invalid_request', 'cursor is not one this server issued: it was altered or truncated');
      }
      const decoded: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      if (!isRecord(decoded) || typeof decoded.after !== 'number' || typeof decoded.query !== 'string') {
        throw new Error('a cursor this server signed does not hold its last id and query');
      }
      const { after, query } = decoded;
      if (query !== digest(binding)) {
        throw new ApiError(
          'invalid_request',
          'cursor was issued for other filters or another limit: send it with the same query parameters as the request that returned it',
        );
      }
      return after;
    },
  };
}
