/**
 * A value at once, or a promise of it: what a step returns when it can often answer without
 * waiting (SQLite answers in-process), so that a request it answers at once takes no turn of the
 * microtask queue per step.
 */
export type MaybePromise<T> = T | Promise<T>;

/** `next` of a value: at once when the value is there, once it settles when it is a promise. */
export function andThen<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}
