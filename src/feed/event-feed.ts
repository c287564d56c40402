import { ApiError } from '../errors';
import type { MaybePromise } from '../maybe-promise';
import { DEFAULT_FEED } from '../config';
import { EventsExpiredError, type EventLog, type EventPage } from '../store';
import { heldBackWait } from './held-back';

/** How the change feed is served: how long events are kept, and how many requests may wait at once. */
export interface EventFeedOptions {
  /** Days an event is kept before it is removed (PETSTORE_EVENT_RETENTION_DAYS; default 30). */
  retentionDays?: number;
  /** Requests that may wait for events at once (PETSTORE_FEED_MAX_WAITING; default 1000); one more is a 503. */
  maxWaiting?: number;
  /** Called with the number of waiting requests whenever it changes (for the metrics). */
  onWaiting?: (count: number) => void;
}

/**
 * The change feed's side of a running server: the requests waiting for events (each holds a
 * listener on the store, never a database connection), their bound, their release at shutdown.
 * Events past their retention are removed by src/retention.ts.
 */
export class EventFeed {
  readonly retentionDays: number;
  readonly maxWaiting: number;
  private readonly releases = new Set<() => void>();
  private closed = false;

  constructor(
    private readonly store: EventLog,
    private readonly options: EventFeedOptions = {},
  ) {
    this.retentionDays = options.retentionDays ?? DEFAULT_FEED.retentionDays;
    this.maxWaiting = options.maxWaiting ?? DEFAULT_FEED.maxWaiting;
  }

  /** How many requests are waiting for events now. */
  get waiting(): number {
    return this.releases.size;
  }

  /**
   * Reads the feed with `read` until it finds events: at once, then whenever the store says that
   * events may have committed, for up to `ms`. Answers the last read: an empty page when the time
   * ran out, or when the server began to shut down (close).
   */
  async waitFor(first: EventPage, read: () => MaybePromise<EventPage>, ms: number): Promise<EventPage> {
    if (this.closed || ms <= 0 || first.events.length > 0) return first;
    if (this.releases.size >= this.maxWaiting) {
      throw new ApiError('service_unavailable', `${this.maxWaiting} requests are already waiting for events; retry later`, {
        'Retry-After': '1',
      });
    }
    return new Promise<EventPage>((resolve, reject) => {
      let last = first;
      let reading = false;
      let again = false;
      let done = false;
      // Events held back by an older transaction (EventPage.heldBack) bring no signal when they
      // settle: the read is tried again, sooner first, then at most once a second (./held-back.ts).
      let heldBackDelay: number | undefined;
      let heldBackTimer: NodeJS.Timeout | undefined;
      const finish = (outcome: { page: EventPage } | { error: unknown }): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        clearTimeout(heldBackTimer);
        unwatch();
        this.releases.delete(release);
        this.options.onWaiting?.(this.releases.size);
        if ('page' in outcome) resolve(outcome.page);
        // What the store threw, as it threw it: the request's error reply maps it.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
        else reject(outcome.error);
      };
      const release = (): void => finish({ page: last });
      // One read at a time; a signal during a read asks for one more after it.
      const look = (): void => {
        if (done) return;
        if (reading) {
          again = true;
          return;
        }
        reading = true;
        again = false;
        Promise.resolve()
          .then(read)
          .then(
            (page) => {
              reading = false;
              last = page;
              if (page.events.length > 0) finish({ page });
              else if (again) look();
              else if (page.heldBack === true && heldBackTimer === undefined) {
                heldBackDelay = heldBackWait(heldBackDelay);
                heldBackTimer = setTimeout(() => {
                  heldBackTimer = undefined;
                  look();
                }, heldBackDelay);
              }
            },
            (error: unknown) => {
              reading = false;
              finish({ error });
            },
          );
      };
      const timer = setTimeout(release, ms);
      this.releases.add(release);
      this.options.onWaiting?.(this.releases.size);
      const unwatch = this.store.watchEvents(look);
      // An event may have committed between the first read and the watch.
      look();
    });
  }

  /** Reads the feed, a position older than the events kept being the client's 400. */
  async read(read: () => MaybePromise<EventPage>): Promise<EventPage> {
    try {
      return await read();
    } catch (err) {
      if (!(err instanceof EventsExpiredError)) throw err;
      throw new ApiError(
        'invalid_request',
        `after is older than the events kept (${this.retentionDays} days): list the orders again, and read on from from=latest`,
      );
    }
  }

  /** Answers every waiting request now (an empty page, its cursor unchanged), and every later one at once. */
  close(): void {
    this.closed = true;
    for (const release of [...this.releases]) release();
  }
}
