/**
 * Events held back by an older transaction still running (EventPage.heldBack, on PostgreSQL) bring
 * no signal when they settle: a reader that was told so looks again by itself, soon first, then at
 * most once a second. The change feed's waiting reads and webhook delivery both wait so.
 */
const HELD_BACK_FIRST_MS = 25;
const HELD_BACK_MAX_MS = 1000;

/** The wait before the next look at events still held back, after waiting `previous` (none yet: undefined). */
export function heldBackWait(previous: number | undefined): number {
  return previous === undefined ? HELD_BACK_FIRST_MS : Math.min(previous * 2, HELD_BACK_MAX_MS);
}
