/**
 * Resolves once `condition` holds, checked on every turn of the event loop (not on a clock), and
 * fails with `what` if it has not within `timeoutMs`. For state that changes without an event a
 * test can listen to, such as a counter updated when a response closes.
 */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
