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
export function removeHourly(keptMs: number, remove: (before: string) => Promise<number>, logger: Logger, log: RemovalLog): () => void {
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
