// Reading what was thrown, whatever threw it, and an Error that costs no stack: for every layer.

/**
 * An Error without a stack trace. An ApiError is an expected answer, never logged with a stack, and
 * capturing one costs more than the rest of a 404; V8 captures it in Error's constructor, reading
 * `Error.stackTraceLimit` there and nowhere else, so the limit is 0 only for the length of that call.
 */
export class StacklessError extends Error {
  constructor(message: string) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
}

/** The `code` a Node or driver error carries (`ENOENT`, `SQLITE_BUSY`, `23505`), when it has one. */
export function errorCode(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  return typeof err.code === 'string' ? err.code : undefined;
}

/** The message of what was thrown, read by its shape (an Error of another realm has one too); undefined without one. */
export function messageOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('message' in err)) return undefined;
  return typeof err.message === 'string' ? err.message : undefined;
}

/** An error's message, or what was thrown, as text. */
export function errorMessage(err: unknown): string {
  return messageOf(err) ?? String(err);
}
