import { createHmac, hash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../errors';
import { isRecord } from '../records';
import type { EventPosition } from '../store';

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
  const seal = sealer(secret);
  const digest = (binding: string): string => hash('sha256', binding, 'base64url').slice(0, 16);
  return {
    make(lastId, binding) {
      return seal.seal({ after: lastId, query: digest(binding) });
    },
    read(cursor, binding) {
      const decoded = seal.open(cursor, 'cursor');
      if (!isRecord(decoded) || typeof decoded.after !== 'number' || typeof decoded.query !== 'string') {
        throw new ApiError('invalid_request', 'cursor is not a cursor of the order list: send the nextCursor of a page of orders');
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

/**
 * Cursors of the change feed: a position (EventPosition), signed as list cursors are, so that any
 * instance sharing the store reads another's; never bound to a query, so that the limit and wait
 * may change from one request to the next.
 */
export interface EventCursors {
  make(position: EventPosition): string;
  /** The position a cursor carries, when this store made it for the feed; else a 400 naming `after`. */
  read(cursor: string): EventPosition;
}

export function eventCursors(secret: Buffer): EventCursors {
  const seal = sealer(secret);
  return {
    make: ({ tx, seq }) => seal.seal({ tx, seq }),
    read(cursor) {
      const decoded = seal.open(cursor, 'after');
      if (!isRecord(decoded) || typeof decoded.tx !== 'string' || !/^\d{1,20}$/.test(decoded.tx) || !Number.isSafeInteger(decoded.seq)) {
        throw new ApiError('invalid_request', 'after is not a cursor of the change feed: send the nextCursor of a page of events');
      }
      return { tx: decoded.tx, seq: Number(decoded.seq) };
    },
  };
}

/**
 * A value sealed as `<payload>.<mac>`, both base64url: the payload its JSON, the mac an
 * HMAC-SHA256 of the payload under the store's secret.
 */
function sealer(secret: Buffer): { seal(value: unknown): string; open(token: string, parameter: string): unknown } {
  const mac = (payload: string): Buffer => createHmac('sha256', secret).update(payload).digest();
  return {
    seal(value) {
      const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
      return `${payload}.${mac(payload).toString('base64url')}`;
    },
    open(token, parameter) {
      const [payload = '', signature = '', extra] = token.split('.');
      // Compared as text, so that no other spelling of the same bytes passes.
      const given = Buffer.from(signature);
      const expected = Buffer.from(mac(payload).toString('base64url'));
      if (extra !== undefined || given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw new ApiError('invalid_request', `${parameter} is not one this server issued: it was altered or truncated`);
      }
      const value: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      return value;
    },
  };
}
