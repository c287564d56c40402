import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Logger } from '../logger';
import { orderEventOf } from '../orders/events';
import {
  EventsExpiredError,
  type AttemptOutcome,
  type AttemptRecord,
  type EndpointRecord,
  type EventLog,
  type EventPage,
  type EventPosition,
  type OrderEventRecord,
  type WebhookStore,
} from '../store';
import { keptByText } from '../kept';
import { errorMessage } from '../thrown';
import { destinationOf, systemResolve, type AddressRules, type Resolve } from './addresses';
import { attempt, delivered, endpointAgent, type AttemptResult } from './attempt';
import type http from 'node:http';
import { ATTEMPT_TIMEOUT_MS, DEFAULT_RETRY_SCHEDULE, DISABLE_AFTER_FAILING_MS, nextWait } from './schedule';
import { signedHeaders } from './signature';
import { heldBackWait } from '../feed/held-back';

/**
 * Delivery from the feed: every event committed after an endpoint was made reaches it at least
 * once, whatever instance committed it and whatever instances run.
 *
 * - **One instance per endpoint.** Each instance claims the endpoints nobody holds (a lease in the
 *   store, four attempts long), and runs one worker per endpoint it holds. An attempt starts only
 *   while at least two attempts' time of the lease is left (renewed when a quarter of it has passed),
 *   and every write it makes holds only while the lease does: two instances never attempt the same
 *   endpoint at once.
 * - **At least once.** A worker reads the feed after its endpoint's cursor, and moves the cursor
 *   past an event only once its outcome is written (delivered, or kept as a retry). A crash between
 *   an attempt and its record sends the event again. A receiver dedupes by `webhook-id`.
 * - **Never in the API's way.** Workers run beside the requests; an attempt holds no database
 *   connection while it waits on its receiver, and one slow receiver holds back only its own
 *   endpoint's events.
 * - **Soon.** A commit in this process, or in another sharing the store, wakes every worker
 *   (EventLog.watchEvents), so the first attempt follows the commit at once.
 */
export interface DeliveryOptions {
  readonly log: EventLog;
  readonly webhooks: WebhookStore;
  readonly logger: Logger;
  readonly rules: AddressRules;
  /** The waits after each failure, in milliseconds (PETSTORE_WEBHOOK_RETRY_SCHEDULE). */
  readonly schedule?: readonly number[];
  /** Checks a body against the document before it is sent: why it breaks it, or undefined. */
  readonly check?: (event: WebhookEventBody) => string | undefined;
  /** What each attempt came to, for the metrics. */
  readonly onAttempt?: (outcome: AttemptOutcome) => void;
  /** How old the oldest event still to reach an endpoint is, in seconds, each time a worker looks. */
  readonly onLag?: (endpointId: string, seconds: number) => void;
  /** This instance no longer delivers to the endpoint: its lag is another's to report. */
  readonly onLagGone?: (endpointId: string) => void;
  /** Endpoints disabled by delivery (a 410, five days of failures). */
  readonly onDisabled?: (endpointId: string, reason: string) => void;
  /** How many endpoints are disabled, however they were: read at every claim. */
  readonly onDisabledCount?: (count: number) => void;
  readonly resolve?: Resolve;
  readonly attemptTimeoutMs?: number;
  /** How often an instance looks for endpoints nobody holds (a new one, or one whose holder died). */
  readonly claimEveryMs?: number;
}

/** The body of one delivery: the event as the feed serves it, with its id first. */
export type WebhookEventBody = { readonly id: string } & ReturnType<typeof orderEventOf>;

/** A running delivery; stop() ends its workers and gives their endpoints up for another instance. */
export interface Delivery {
  /** Looks for work at once: a new endpoint, a change to one. */
  wake(): void;
  stop(): Promise<void>;
}

/** Events a worker reads from the feed at a time. */
const PAGE = 50;
/** Retries a worker takes at a time. */
const RETRIES = 20;
/** Endpoints one instance holds at most. */
const MAX_HELD = 1000;
/** How often an instance claims endpoints, as shipped. */
export const CLAIM_EVERY_MS = 5_000;
/** A worker with nothing to do looks again at least this often, renewing its lease. */
const IDLE_MS = 10_000;

/**
 * How long an instance holds an endpoint from its claim or its last renewal: four attempts' time
 * (60 s as shipped). An attempt starts only while at least two attempts' time is left, so the
 * lease outlives every attempt its holder starts, and the endpoint of an instance that died is
 * taken over once the lease runs out.
 */
export function leaseSecondsOf(attemptTimeoutMs: number): number {
  return Math.max(2, Math.ceil((4 * attemptTimeoutMs) / 1000));
}

/** The id of an event: its place in the feed, which no other event has, on every store. */
export function webhookEventId(position: EventPosition): string {
  return `evt_${position.seq}`;
}

/** The body of an event's delivery. */
export function webhookBodyOf(event: OrderEventRecord): WebhookEventBody {
  return { id: webhookEventId(event.position), ...orderEventOf(event) };
}

/** Starts delivering from the feed to every enabled endpoint this instance can claim. */
export function startDelivery(options: DeliveryOptions): Delivery {
  const owner = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const leaseSeconds = leaseSecondsOf(options.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS);
  const workers = new Map<string, Worker>();
  const pages = new SharedPages(options.log, options.check);
  let stopped = false;
  let claiming: Promise<void> | undefined;
  let claimedAt = 0;

  const claim = async (): Promise<void> => {
    if (stopped) return;
    claimedAt = Date.now();
    try {
      options.onDisabledCount?.(await options.webhooks.disabledEndpoints());
      const held = await options.webhooks.claimEndpoints(owner, MAX_HELD, leaseSeconds);
      for (const endpoint of held) {
        if (stopped) break;
        const running = workers.get(endpoint.id);
        if (running !== undefined) running.update(endpoint);
        else {
          const worker = new Worker(endpoint, owner, leaseSeconds, options, pages, () => {
            workers.delete(endpoint.id);
            options.onLagGone?.(endpoint.id);
          });
          workers.set(endpoint.id, worker);
          worker.start();
        }
      }
    } catch (err) {
      options.logger.warn({ err: errorMessage(err) }, 'webhook endpoints could not be claimed; trying again');
    }
  };
  const claimSoon = (): void => {
    claiming ??= claim().finally(() => (claiming = undefined));
  };
  // Claims at least once a lease, so that the endpoints of an instance that died are soon taken over.
  const timer = setInterval(claimSoon, Math.min(options.claimEveryMs ?? CLAIM_EVERY_MS, leaseSeconds * 1000));
  timer.unref();
  const unwatch = options.log.watchEvents(() => {
    pages.forget();
    for (const worker of workers.values()) worker.wake();
    // An endpoint made since the last claim, or one whose holder died, is taken soon, not at the next tick.
    if (Date.now() - claimedAt > 1000) claimSoon();
  });
  claimSoon();

  return {
    wake: () => {
      claimSoon();
      for (const worker of workers.values()) worker.wake();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      unwatch();
      await claiming;
      await Promise.all([...workers.values()].map((worker) => worker.stop()));
    },
  };
}

/** How long a page read from the feed may serve other workers, at most: they ask together after a wake. */
const SHARED_PAGE_MS = 250;
/** The bodies kept for the events sent last: an event goes to every endpoint that wants it, mostly within moments. */
const KEPT_BODIES = 1000;

/** An event's body as every endpoint is sent it, checked against the document: its text, or why it breaks the contract. */
type PreparedBody = { readonly id: string; readonly text: string } | { readonly id: string; readonly problem: string };

/**
 * The feed's pages as this instance's workers read them: the endpoints it delivers to are mostly at
 * the same place in the feed, so a page read after a position serves every worker that asks for it
 * until the next commit is heard of (`forget`), and for SHARED_PAGE_MS at most. A page kept
 * meanwhile only lacks what was committed since it was read, and a commit heard of wakes every
 * worker to read again. Events that settle with no signal (PostgreSQL's, held back by an older
 * transaction) are looked for again by each worker itself, and a page that says so is not kept.
 *
 * An event's body is checked and written once for every endpoint it goes to (`bodyOf`): an event
 * never changes, so the body made for its place in the feed serves whichever worker sends it next.
 */
class SharedPages {
  readonly #log: EventLog;
  readonly #check: DeliveryOptions['check'];
  readonly #kept = new Map<string, { readonly page: Promise<EventPage>; readonly at: number }>();
  /** The bodies of the events sent last, by their place in the feed. */
  readonly #bodies = keptByText<PreparedBody>(KEPT_BODIES);

  constructor(log: EventLog, check: DeliveryOptions['check']) {
    this.#log = log;
    this.#check = check;
  }

  bodyOf(event: OrderEventRecord): PreparedBody {
    return this.#bodies(`${event.position.tx}:${event.position.seq}`, () => {
      const body = webhookBodyOf(event);
      const problem = this.#check?.(body);
      return problem === undefined ? { id: body.id, text: JSON.stringify(body) } : { id: body.id, problem };
    });
  }

  read(after: EventPosition | 'oldest'): Promise<EventPage> {
    const key = after === 'oldest' ? after : `${after.tx}:${after.seq}`;
    const now = performance.now();
    const kept = this.#kept.get(key);
    if (kept !== undefined && now - kept.at < SHARED_PAGE_MS) return kept.page;
    const read = { page: Promise.resolve(this.#log.readEvents(after, PAGE)), at: now };
    this.#kept.set(key, read);
    // A read that failed is not kept, nor one with events held back (they settle with no signal):
    // the next worker asks again.
    const drop = (): void => void (this.#kept.get(key) === read && this.#kept.delete(key));
    read.page.then((page) => page.heldBack === true && drop(), drop);
    return read.page;
  }

  forget(): void {
    this.#kept.clear();
  }
}

/** One endpoint's deliveries, in this instance, while it holds the endpoint's lease. */
class Worker {
  #endpoint: EndpointRecord;
  readonly #owner: string;
  readonly #leaseSeconds: number;
  readonly #options: DeliveryOptions;
  readonly #pages: SharedPages;
  readonly #done: () => void;
  #stopped = false;
  #woken = false;
  #wakeUp: (() => void) | undefined;
  #running: Promise<void> | undefined;
  /** When this worker last renewed its lease (performance.now()), and the connection it keeps to its receiver. */
  #renewedAt = Number.NEGATIVE_INFINITY;
  #agent: { readonly url: string; readonly agent: http.Agent } | undefined;
  /**
   * When this endpoint's next retry is due (ms since the epoch), null when none waits, undefined
   * when not known: read once, then kept here, since while this worker holds the endpoint only it
   * schedules or drops its retries. Spares two reads each time the worker wakes.
   */
  #nextRetry: number | null | undefined;
  /** How long to wait before looking again at events held back by an older transaction; undefined when none were. */
  #heldBack: number | undefined;

  constructor(
    endpoint: EndpointRecord,
    owner: string,
    leaseSeconds: number,
    options: DeliveryOptions,
    pages: SharedPages,
    done: () => void,
  ) {
    this.#endpoint = endpoint;
    this.#owner = owner;
    this.#leaseSeconds = leaseSeconds;
    this.#options = options;
    this.#pages = pages;
    this.#done = done;
  }

  start(): void {
    this.#running = this.#run().finally(this.#done);
  }

  /** A claim read the endpoint again: its url, types or secrets may have changed. */
  update(endpoint: EndpointRecord): void {
    this.#endpoint = endpoint;
    this.wake();
  }

  wake(): void {
    this.#woken = true;
    this.#wakeUp?.();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.wake();
    await this.#running;
  }

  get #webhooks(): WebhookStore {
    return this.#options.webhooks;
  }

  async #run(): Promise<void> {
    const id = this.#endpoint.id;
    try {
      while (!this.#stopped) {
        this.#woken = false;
        // Held, and long enough for an attempt: else another instance may hold it now.
        if (!(await this.#holds())) return;
        const fresh = await this.#webhooks.getEndpoint(id);
        if (fresh === null || fresh.status !== 'enabled') return;
        this.#endpoint = fresh;
        const retriesLeft = await this.#retries();
        const eventsLeft = await this.#newEvents();
        if (this.#stopped) return;
        // A commit since the feed was read woke this worker; else all it read was attempted.
        if (!retriesLeft && !eventsLeft && !this.#woken) await this.#idle();
      }
    } catch (err) {
      this.#options.logger.warn(
        { endpointId: id, err: errorMessage(err) },
        'webhook delivery stopped for this endpoint; it is claimed again',
      );
    } finally {
      this.#agent?.agent.destroy();
      await this.#webhooks.releaseLease(id, this.#owner).catch(() => undefined);
    }
  }

  /**
   * Whether this worker still holds its endpoint for long enough to make an attempt: renewed now,
   * unless it was renewed less than a quarter of a lease ago (three quarters of it, three attempts'
   * time, are left then, by this process's own monotonic clock), which spares a write per event.
   */
  async #holds(): Promise<boolean> {
    if (performance.now() - this.#renewedAt < (this.#leaseSeconds * 1000) / 4) return true;
    const renewing = performance.now();
    const left = await this.#webhooks.renewLease(this.#endpoint.id, this.#owner, this.#leaseSeconds);
    const holds = left !== null && left * 1000 >= 2 * (this.#options.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS);
    this.#renewedAt = holds ? renewing : Number.NEGATIVE_INFINITY;
    return holds;
  }

  /** The kept connection to the endpoint's receiver, made again when its URL changed. */
  #agentFor(url: URL): http.Agent {
    if (this.#agent?.url !== url.origin) {
      this.#agent?.agent.destroy();
      this.#agent = { url: url.origin, agent: endpointAgent(url) };
    }
    return this.#agent.agent;
  }

  /** When the next retry is due, as this worker knows it, else as the store says. */
  async #nextRetryAt(): Promise<number | null> {
    if (this.#nextRetry === undefined) {
      const next = await this.#webhooks.nextRetryAt(this.#endpoint.id);
      this.#nextRetry = next === null ? null : Date.parse(next);
    }
    return this.#nextRetry;
  }

  /** Waits for a wake, the next retry's time, or IDLE_MS. */
  async #idle(): Promise<void> {
    const next = await this.#nextRetryAt();
    const untilRetry = next === null ? IDLE_MS : Math.max(0, next - Date.now());
    const renewal = (this.#leaseSeconds * 1000) / 4;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.min(IDLE_MS, untilRetry, renewal, this.#heldBack ?? IDLE_MS));
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#wakeUp = done;
    });
    this.#wakeUp = undefined;
  }

  /** The retries that are due: each attempted again. Whether more may be due at once. */
  async #retries(): Promise<boolean> {
    const next = await this.#nextRetryAt();
    if (next === null || next > Date.now()) return false;
    this.#nextRetry = undefined;
    const due = await this.#webhooks.dueRetries(this.#endpoint.id, new Date().toISOString(), RETRIES);
    for (const retry of due) {
      if (this.#stopped) break;
      const went = await this.#deliver(retry.eventId, retry.body, retry.attempts + 1);
      if (went === 'lost') return true;
    }
    return due.length === RETRIES;
  }

  /**
   * The events after the cursor: each attempted, then the cursor moved past it. Whether there may
   * be more to read at once (a full page, or the endpoint to read again).
   */
  async #newEvents(): Promise<boolean> {
    const endpoint = this.#endpoint;
    let page;
    try {
      page = await this.#pages.read(endpoint.cursor);
    } catch (err) {
      if (!(err instanceof EventsExpiredError)) throw err;
      // Events it had not been sent were removed (the feed keeps them for days): it reads on from
      // the oldest kept, and says so.
      this.#options.logger.warn({ endpointId: endpoint.id }, 'events this webhook endpoint had not been sent were removed from the feed');
      page = await this.#pages.read('oldest');
    }
    // Events held back by an older transaction bring no wake when they settle: looked for again soon.
    this.#heldBack = page.heldBack === true ? heldBackWait(this.#heldBack) : undefined;
    const oldest = page.events[0];
    this.#options.onLag?.(endpoint.id, oldest === undefined ? 0 : Math.max(0, (Date.now() - Date.parse(oldest.occurredAt)) / 1000));
    let at = endpoint.cursor;
    for (const event of page.events) {
      if (this.#stopped) break;
      const wanted = endpoint.eventTypes === null || endpoint.eventTypes.includes(event.type);
      let moved = false;
      if (wanted) {
        const body = this.#pages.bodyOf(event);
        if ('problem' in body) {
          // Never sent: the contract check refused it, as it refuses a reply; logged, and kept as failed.
          this.#options.logger.error(
            { endpointId: endpoint.id, eventId: body.id, problem: body.problem },
            'a webhook body breaks the contract; not sent',
          );
          await this.#log(body.id, 1, { error: `the body breaks the contract: ${body.problem}`, durationMs: 0 }, 'failed');
        } else {
          const went = await this.#deliver(body.id, body.text, 1, { from: at, to: event.position });
          if (went === 'lost') return true;
          moved = went === 'sent and moved past';
        }
      }
      if (!moved && !(await this.#webhooks.advanceCursor(endpoint.id, this.#owner, at, event.position))) {
        // Lost the lease, or the cursor was moved (a replay): read the endpoint again.
        return true;
      }
      at = event.position;
      this.#endpoint = { ...this.#endpoint, cursor: at };
    }
    if (page.events.length === 0 && (page.next.seq !== at.seq || page.next.tx !== at.tx)) {
      await this.#webhooks.advanceCursor(endpoint.id, this.#owner, at, page.next);
    }
    return page.events.length === PAGE;
  }

  /**
   * One attempt of one event, and what it leads to: delivered; kept for a retry; failed for good
   * (the schedule spent); or the endpoint disabled (a 410, five days of failures). 'lost' when the
   * endpoint is no longer this worker's to deliver to. A new event's attempt names the cursor's
   * move past it (`past`): a first attempt delivered with nothing else to write is logged with the
   * move, in one write ('sent and moved past'); any other outcome leaves the move to the caller.
   */
  async #deliver(
    eventId: string,
    body: string,
    attemptNumber: number,
    past?: { readonly from: EventPosition; readonly to: EventPosition },
  ): Promise<'sent' | 'sent and moved past' | 'failed' | 'lost'> {
    const endpoint = this.#endpoint;
    const webhooks = this.#webhooks;
    // Every attempt starts on a lease renewed now, with time left for the whole attempt twice over.
    if (!(await this.#holds())) return 'lost';
    const url = new URL(endpoint.url);
    const destination = await destinationOf(url, this.#options.rules, this.#options.resolve ?? systemResolve);
    let result: AttemptResult;
    let refused = false;
    if ('refused' in destination) {
      refused = true;
      result = { error: `not sent: ${destination.refused}`, durationMs: 0 };
    } else {
      const timestamp = Math.floor(Date.now() / 1000);
      result = await attempt({
        url,
        addresses: destination.addresses,
        headers: signedHeaders(endpoint.secrets, eventId, timestamp, body),
        body,
        agent: this.#agentFor(url),
        ...(this.#options.attemptTimeoutMs === undefined ? {} : { timeoutMs: this.#options.attemptTimeoutMs }),
      });
    }
    const now = Date.now();
    if (delivered(result) && past !== undefined && attemptNumber === 1 && endpoint.failingSince === null) {
      const moved = await webhooks.logAndAdvance(
        endpoint.id,
        this.#owner,
        this.#attemptRecord(eventId, attemptNumber, result, 'delivered'),
        past.from,
        past.to,
      );
      this.#options.onAttempt?.('delivered');
      // Not moved: the lease was lost, or a replay moved the cursor; the endpoint is read again.
      return moved ? 'sent and moved past' : 'lost';
    }
    if (delivered(result)) {
      await this.#log(eventId, attemptNumber, result, 'delivered');
      if (attemptNumber > 1) {
        await webhooks.dropRetry(endpoint.id, this.#owner, eventId);
        this.#nextRetry = undefined;
      }
      if (endpoint.failingSince !== null) {
        await webhooks.noteFailure(endpoint.id, this.#owner, null);
        this.#endpoint = { ...this.#endpoint, failingSince: null };
      }
      return 'sent';
    }
    if (result.status === 410) {
      await this.#log(eventId, attemptNumber, result, 'failed');
      await this.#disable('the receiver answered 410 Gone');
      return 'lost';
    }
    const wait = nextWait(attemptNumber, this.#options.schedule ?? DEFAULT_RETRY_SCHEDULE, Math.random(), result.retryAfterMs);
    if (wait === undefined) {
      await this.#log(eventId, attemptNumber, result, refused ? 'refused' : 'failed');
      if (attemptNumber > 1) {
        await webhooks.dropRetry(endpoint.id, this.#owner, eventId);
        this.#nextRetry = undefined;
      }
    } else {
      const kept = await webhooks.scheduleRetry(endpoint.id, this.#owner, {
        eventId,
        body,
        attempts: attemptNumber,
        nextAt: new Date(now + wait).toISOString(),
      });
      this.#nextRetry = this.#nextRetry === undefined ? undefined : Math.min(this.#nextRetry ?? Infinity, now + wait);
      await this.#log(eventId, attemptNumber, result, refused ? 'refused' : 'retrying');
      if (!kept) return 'lost';
    }
    const since = await webhooks.noteFailure(endpoint.id, this.#owner, new Date(now).toISOString());
    if (since === false) return 'lost';
    this.#endpoint = { ...this.#endpoint, failingSince: since };
    if (since !== null && now - Date.parse(since) >= DISABLE_AFTER_FAILING_MS) {
      await this.#disable('every attempt failed for five days');
      return 'lost';
    }
    return 'failed';
  }

  #attemptRecord(eventId: string, attemptNumber: number, result: AttemptResult, outcome: AttemptOutcome): AttemptRecord {
    return {
      eventId,
      attempt: attemptNumber,
      at: new Date().toISOString(),
      status: result.status ?? null,
      error: result.error ?? null,
      durationMs: result.durationMs,
      outcome,
    };
  }

  async #log(eventId: string, attemptNumber: number, result: AttemptResult, outcome: AttemptOutcome): Promise<void> {
    await this.#webhooks.logAttempt(this.#endpoint.id, this.#attemptRecord(eventId, attemptNumber, result, outcome));
    // Told once the log has it, so that whoever listens reads the attempt there.
    this.#options.onAttempt?.(outcome);
  }

  async #disable(reason: string): Promise<void> {
    const id = this.#endpoint.id;
    if (await this.#webhooks.disableEndpoint(id, this.#owner, reason)) {
      this.#options.logger.warn({ endpointId: id, reason }, 'webhook endpoint disabled');
      this.#options.onDisabled?.(id, reason);
    }
    this.#stopped = true;
  }
}
