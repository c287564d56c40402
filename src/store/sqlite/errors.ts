import { errorCode, errorMessage, StoreBusyError, StoreUnavailableError } from '../../errors';

/**
 * The SQLite result code of an error, recognised by shape: the native addon keeps the error
 * class of the first copy of better-sqlite3 loaded in the process, so `instanceof` fails
 * wherever modules are loaded twice.
 */
export function sqliteCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('name' in err) || err.name !== 'SqliteError') return undefined;
  return errorCode(err);
}

/** SQLite result codes that mean "the store cannot serve right now", not "this request is wrong". */
const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|FULL|READONLY|NOTADB|CORRUPT|PROTOCOL)/;

/** Turns an error meaning "the store is unreachable" into StoreUnavailableError; returns others as they are. */
export function translate(err: unknown): unknown {
  const code = sqliteCode(err);
  if (code === 'SQLITE_BUSY') return new StoreBusyError(`${code}: ${errorMessage(err)}`, { cause: err });
  if (code !== undefined && UNAVAILABLE.test(code)) return new StoreUnavailableError(`${code}: ${errorMessage(err)}`, { cause: err });
  return err;
}

/** What an operation on a closed store raises: the store checks that it is open before it asks the driver. */
export function storeClosed(): StoreUnavailableError {
  return new StoreUnavailableError('the database is closed');
}

/** Runs a store operation, turning an unreachable store into StoreUnavailableError. */
export function guard<T>(operation: () => T): T {
  try {
    return operation();
  } catch (err) {
    throw translate(err);
  }
}
