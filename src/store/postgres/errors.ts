import pg from 'pg';
import { errorCode, messageOf, StoreUnavailableError } from '../../errors';

/**
 * SQLSTATE classes and codes that mean "the database cannot serve right now", not "this request
 * is wrong": connection exceptions (08), insufficient resources (53), operator intervention such
 * as a restart or pg_terminate_backend (57P01-57P05), a statement timeout (57014), and a lock
 * or serialization conflict that outlived its wait (55P03, 40001, 40P01).
 */
const UNAVAILABLE_STATE = /^(08|53|57P0[1-5]$|57014$|55P03$|40001$|40P01$)/;

/** Node's codes for a network connection that failed, was refused or went away. */
const NETWORK_CODE = /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN)$/;

/** The SQLSTATE of a PostgreSQL error, or undefined. */
export function sqlState(err: unknown): string | undefined {
  return err instanceof pg.DatabaseError && typeof err.code === 'string' ? err.code : undefined;
}

/**
 * Turns an error meaning "the database cannot serve" into StoreUnavailableError; returns others
 * as they are. Told apart by type, never by message:
 * - the server's own errors are DatabaseErrors, with a SQLSTATE (UNAVAILABLE_STATE);
 * - a failed socket is a Node error with a network code;
 * - node-postgres and its pool raise a plain `Error`, with no code, when a connection fails or
 *   ends (terminated, not queryable, a connect timeout, a pool that has ended). This store's own
 *   errors each have a class of their own, and a mistake in code is a TypeError or the like, so a
 *   plain Error here is the driver's.
 */
export function translatePg(err: unknown): unknown {
  // By shape rather than `instanceof Error`: Node's own errors come from its realm, which is not
  // always the one this module runs in (a test sandbox).
  const message = messageOf(err);
  if (err instanceof StoreUnavailableError || typeof err !== 'object' || err === null || message === undefined) return err;
  let reason: string | undefined;
  const state = sqlState(err);
  if (state !== undefined) {
    if (UNAVAILABLE_STATE.test(state)) reason = state;
  } else {
    const code = errorCode(err);
    if (code !== undefined && NETWORK_CODE.test(code)) reason = code;
    else if (('code' in err ? err.code : undefined) === undefined && err.constructor.name === 'Error') reason = 'connection';
  }
  return reason === undefined ? err : new StoreUnavailableError(`${reason}: ${message}`, { cause: err });
}

/** Runs a database operation, turning an unreachable database into StoreUnavailableError. */
export async function guardPg<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    throw translatePg(err);
  }
}
