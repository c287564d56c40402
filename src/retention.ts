import type { Logger } from './logger';

const HOUR_MS = 60 * 60 * 1000;

/** What an hourly removal says in the log: of what it removed, of a failure, and the fields both carry. */
export interface RemovalLog {
  readonly removed: string;
  readonly failed: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/**
 * Removes what is older than `keptMs` now, then every hour until the returned function is called:
 * `remove` gets the cut (an ISO 8601 UTC time) and answers how many it removed, which is logged at
 * info when there were any; a failure is logged at warn and tried again the next hour. The change
 * feed's old events and the placements' expired Idempotency-Key records are removed so.
 */
function removeHourly(keptMs: number, remove: (before: string) => Promise<number>, logger: Logger, log: RemovalLog): () => void {
  const run = (): void => {
    remove(new Date(Date.now() - keptMs).toISOString()).then(
      (removed) => {
        if (removed > 0) logger.info({ removed, ...log.fields }, log.removed);
      },
      (err: unknown) => logger.warn({ err, ...log.fields }, log.failed),
    );
  };
  const timer = setInterval(run, HOUR_MS);
  timer.unref();
  run();
  return () => clearInterval(timer);
}

/** What the service keeps for a while, and for how long. */
export interface Retention {
  /** Days the change feed's events are kept (PETSTORE_EVENT_RETENTION_DAYS). */
  readonly eventDays: number;
  /** Hours a placement's Idempotency-Key record is kept (PETSTORE_IDEMPOTENCY_HOURS). */
  readonly idempotencyHours: number;
}

/**
 * Removes what the service keeps past its time, now and then every hour, until the returned
 * function is called: the change feed's events, and the placements' Idempotency-Key records (a
 * placement ignores an expired record whether or not it has been removed yet). The one place
 * retention runs.
 */
export function startRetention(
  store: { pruneEvents(before: string): Promise<number>; pruneIdempotencyKeys(before: string): Promise<number> },
  kept: Retention,
  logger: Logger,
): () => void {
  const stops = [
    removeHourly(kept.eventDays * 24 * HOUR_MS, (before) => store.pruneEvents(before), logger, {
      removed: 'removed old events',
      failed: 'could not remove old events; trying again later',
      fields: { retentionDays: kept.eventDays },
    }),
    removeHourly(kept.idempotencyHours * HOUR_MS, (before) => store.pruneIdempotencyKeys(before), logger, {
      removed: 'removed expired Idempotency-Key records',
      failed: 'could not remove expired Idempotency-Key records; trying again later',
      fields: { idempotencyHours: kept.idempotencyHours },
    }),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}
