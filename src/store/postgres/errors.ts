import { StoreUnavailableError } from '../../errors';

/**
 * SQLSTATE classes and codes that mean "the database cannot serve right now", not "this request
 * is wrong": connection exceptions (08), insufficient resources (53), operator intervention such
 * as a restart or pg_terminate_backend (57P01-57P05), a statement timeout (57014), and a lock
 * or serialization conflict that outlived its wait (55P03, 40001, 40P01).
 */
const UNAVAILABLE_STATE = /^(08|53|57P0[1-5]$|57014$|55P03$|40001$|40P01$)/;

/** Errors raised by the driver or the socket when the server is unreachable or went away. */
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|not queryable|Connection refused|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|Cannot use a pool after calling end/i;

/** The SQLSTATE of a PostgreSQL error, or undefined. */
export function sqlState(err: unknown): string | undefined {
  const { code } = (err ?? {}) as { code?: unknown };
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Turns an error meaning "the database is unreachable" into StoreUnavailableError; returns others as they are. */
export function translatePg(err: unknown): unknown {
  if (err instanceof StoreUnavailableError) return err;
  const state = sqlState(err);
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  if (
    (state !== undefined && UNAVAILABLE_STATE.test(state)) ||
    (typeof code === 'string' && UNAVAILABLE_MESSAGE.test(code)) ||
    (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message))
  ) {
    const label = state ?? (typeof code === 'string' ? code : 'connection');
    return new StoreUnavailableError(`${label}: ${typeof message === 'string' ? message : 'unreachable'}`, { cause: err });
  }
  return err;
}

/** Runs a database operation, turning an unreachable database into StoreUnavailableError. */
export async function guardPg<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (err) {
    throw translatePg(err);
  }
}
