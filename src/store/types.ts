import type { NO_LIMIT, Policy, RateUnit } from '../rate-policy';
import type { MaybePromise } from '../maybe-promise';
/** Where an order is in its life; v1's Order does not show it. */
export type OrderStatus = 'pending' | 'shipped' | 'cancelled';

/**
 * An order as the store holds it, whatever version of the API shows it: each version maps it to
 * its own Order (v1: src/orders/v1-order.ts), so the store knows no version's types.
 */
export interface OrderRecord {
  id: number;
  petId: number;
  quantity: number;
  shipDate: string;
  complete: boolean;
  status: OrderStatus;
}

/**
 * An order as the list shows it: every order listed is pending or shipped, and the list does not
 * say which, so its status is not read.
 */
export type ListedOrder = Omit<OrderRecord, 'status'>;

/** One record of an import file, already validated against the spec's Order schema. */
export interface ImportRecord {
  id?: number;
  petId: number;
  quantity: number;
  shipDate: string;
  complete: boolean;
  status?: Exclude<OrderStatus, 'cancelled'>;
}

/** Which orders a page lists: every order not cancelled that matches all the filters given. */
export interface OrderFilter {
  status?: Exclude<OrderStatus, 'cancelled'> | undefined;
  petId?: number | undefined;
  complete?: boolean | undefined;
  /** Inclusive: an instant key (instantKey in src/date-time.ts). */
  shipFrom?: string | undefined;
  /** Exclusive: an instant key. */
  shipTo?: string | undefined;
}

/** One page of the filtered list: the first `limit` matching orders with an id above `after` (all, without it). */
export interface PageRequest {
  filter: OrderFilter;
  after?: number | undefined;
  limit: number;
}

/** What happened to an order, as the change feed says it. */
export type OrderEventType = 'order.created' | 'order.shipped' | 'order.cancelled';

/**
 * A place in the change feed: just after the event there. `tx` orders transactions (PostgreSQL's
 * transaction id, as decimal text; always "0" on SQLite, whose one writer commits in `seq` order),
 * and `seq` the events in one. Positions compare as the pair (tx as a number, seq).
 */
export interface EventPosition {
  readonly tx: string;
  readonly seq: number;
}

/** One change to an order, as the feed returns it. */
export interface OrderEventRecord {
  readonly position: EventPosition;
  readonly type: OrderEventType;
  readonly orderId: number;
  readonly occurredAt: string;
  /** The order as the change left it: for order.created and order.shipped, never for order.cancelled. */
  readonly order?: OrderRecord | undefined;
}

/** What a read of the feed found: up to `limit` events after the position, and where to read on. */
export interface EventPage {
  readonly events: OrderEventRecord[];
  /** The last event's position, or the position read from when there was none. */
  readonly next: EventPosition;
  /**
   * Whether events after `next` have committed but are held back from every reader until older
   * transactions end (PostgreSQL): no commit will signal them, so a waiting read looks again.
   */
  readonly heldBack?: boolean;
}

/** How many events of each type one commit wrote. */
export type EventCounts = Readonly<Partial<Record<OrderEventType, number>>>;

/** What happened to a cancel request. */
export type CancelOutcome = 'cancelled' | 'shipped' | 'not_found';

/** What happened to a ship request. */
export type ShipOutcome = 'shipped' | 'already_shipped' | 'cancelled' | 'not_found';

/** An order to place: what the client gives; the store gives it its id, and it starts pending and not complete. */
export interface NewOrder {
  readonly petId: number;
  readonly quantity: number;
  readonly shipDate: string;
}

/** One placement of an order under an API key and an Idempotency-Key (Store.placeOrder). */
export interface Placement {
  /** The API key's name: Idempotency-Keys are kept per API key. */
  readonly keyName: string;
  readonly idempotencyKey: string;
  /** What identifies the request's body: the same for a retry of it, another for any other. */
  readonly fingerprint: string;
  readonly order: NewOrder;
  /** Records made before this time (an ISO 8601 UTC time) have expired: their key places afresh. */
  readonly keptSince: string;
}

/**
 * What a placement found: a new order; the order its first placement made, for a retry (as it was
 * then: a retry is answered what the first placement was); another body under the key; or a
 * placement of the key still running.
 */
export type PlaceOutcome =
  | { readonly outcome: 'placed'; readonly order: OrderRecord }
  | { readonly outcome: 'replayed'; readonly order: OrderRecord }
  | { readonly outcome: 'reused' }
  | { readonly outcome: 'in_use' };

/**
 * A key's rate-limit policies: those given, `none` for no limit, or null for the deployment's
 * (PETSTORE_RATE_LIMIT).
 */
export type KeyPolicies = readonly Policy[] | typeof NO_LIMIT | null;

/** An API key as operators see it: never the key itself. */
export interface KeyInfo {
  name: string;
  /** What the key may do (`orders:read`, …), in the order given. */
  scopes: string[];
  policies: KeyPolicies;
  createdAt: string;
  /** When the key stops working (an ISO 8601 UTC time), or null: never. */
  expiresAt: string | null;
  revokedAt: string | null;
  /** Until when the secret it replaced at its last rotation keeps working (an ISO 8601 UTC time), or null: none was replaced. */
  previousUntil: string | null;
}

/** A key found by its hash: its name, and whether it may be used now or why not. */
export interface KeyMatch {
  readonly name: string;
  readonly state: 'active' | 'expired' | 'revoked';
  /** What the key may do. */
  readonly scopes: ReadonlySet<string>;
  /** Its rate-limit policies (none: no limit), or null: the deployment's. */
  readonly policies: readonly Policy[] | null;
}

/** One window of a key's count: when it started (seconds since the epoch, by the store's clock) and the requests counted in it. */
export interface RateWindow {
  readonly start: number;
  readonly used: number;
}

/** A key's count in the window of each unit, as the store's clock stood at `now` (seconds since the epoch). */
export type RateWindows = { readonly now: number } & { readonly [U in RateUnit]: RateWindow };

/** What counting a request against its key's quotas found: whether it was admitted, and the windows after it. */
export interface RateCount {
  readonly admitted: boolean;
  readonly windows: RateWindows;
}

/** What a key is made with, beside its name and hash. */
export interface NewKey {
  /** When it stops working (an ISO 8601 UTC time); never when null or absent. */
  expiresAt?: string | null;
  /** What it may do. */
  scopes: readonly string[];
  /** Its rate-limit policies; the deployment's when null or absent. */
  policies?: KeyPolicies;
}

/** What `updateKey` changes: each field given, and only those. */
export interface KeyChanges {
  /** Its expiry: an ISO 8601 UTC time, or null for none. */
  expiresAt?: string | null;
  /** Its scopes, all of them. */
  scopes?: readonly string[];
  /** Its rate-limit policies, or null for the deployment's. */
  policies?: KeyPolicies;
}

/**
 * A consistent, read-only snapshot of the order list (every order not cancelled, by id),
 * read in chunks so that no caller ever holds the whole list. It must be closed.
 */
export interface OrderSnapshot {
  /** The list's ETag at this snapshot. */
  readonly etag: string;
  /** Up to `max` more orders in id order; an empty array once the list is exhausted. */
  read(max: number): Promise<ListedOrder[]>;
  /** Whether every order has been read; a snapshot that cannot tell without reading on leaves it out. */
  exhausted?(): boolean;
  /** Releases the snapshot; safe to call more than once. */
  close(): Promise<void>;
}

/** What the lists, pages and reads of one order ask of the store. */
export interface OrderReads {
  /** Opens a snapshot of the order list; a list of up to `prefetch` orders may be read at once. */
  snapshotOrders(prefetch?: number): Promise<OrderSnapshot>;
  /**
   * One page of the filtered list, in id order: the first `limit` orders not cancelled that match
   * every filter, with an id above `after`. Each page reads only its own index entries.
   */
  pageOrders(request: PageRequest): Promise<OrderRecord[]>;
  /**
   * The store's secret for signing list cursors: made at random the first time it is asked for, and
   * then the same for every process that opens the store, so that any instance accepts another's cursors.
   */
  cursorSecret(): Promise<Buffer>;
  /** The ETag the order list has now: it changes with every write that changes the list. */
  listEtag(): Promise<string>;
  /**
   * The order with this id, unless it is unknown or cancelled. A store that answers in-process
   * (SQLite) answers at once.
   */
  getOrder(id: number): MaybePromise<OrderRecord | undefined>;
  /** Whether any order exists, cancelled or not. */
  hasOrders(): Promise<boolean>;
  /** Whether an order that has not been cancelled refers to this pet. */
  petExists(petId: number): Promise<boolean>;
}

/** The moves of a pending order. */
export interface OrderMoves {
  /**
   * Atomically moves a pending order to cancelled. A store that answers in-process (SQLite) answers
   * at once for an order that is not pending, which needs no write; a pending order waits for its commit.
   */
  cancelOrder(id: number): MaybePromise<CancelOutcome>;
  /** Atomically moves a pending order to shipped. */
  shipOrder(id: number): Promise<ShipOutcome>;
}

/** Placing orders exactly once, and the records that make it so. */
export interface Placements {
  /**
   * Places a new pending order, exactly once per API key and Idempotency-Key: the order, its
   * order.created event and the key's record (with the placement's answer) commit together, so a
   * crash leaves all or none. A key whose record is kept answers it again (`replayed`) for the same
   * fingerprint, and `reused` for another; a key whose placement is running in this or another
   * instance answers `in_use`. The order's id is above every id the store has had or is importing.
   */
  placeOrder(placement: Placement): Promise<PlaceOutcome>;
  /** Removes the Idempotency-Key records made before `before` (an ISO 8601 UTC time); returns how many. */
  pruneIdempotencyKeys(before: string): Promise<number>;
}

/** Importing orders. */
export interface OrderImport {
  /**
   * Inserts every record, or none if any record fails (the iterable may throw to abort).
   * Records are consumed as they come, a record or a batch at a time, so an import of any size
   * runs in bounded memory. Returns how many were inserted.
   */
  importOrders(records: ImportRecords): Promise<number>;
}

/** The change feed: its events, who hears of them, and their retention. */
export interface EventLog {
  /**
   * Up to `limit` events committed after `after` (from the oldest kept, for 'oldest'), in the order
   * they committed, and where to read on. Throws EventsExpiredError when events after `after` have
   * already been removed (pruneEvents).
   */
  readEvents(after: EventPosition | 'oldest', limit: number): MaybePromise<EventPage>;
  /** The position after the last event committed so far: reading from it returns only later events. */
  latestEventPosition(): MaybePromise<EventPosition>;
  /**
   * Calls `listener` whenever events may have committed, in this process or in any other that
   * shares the store, until the returned function is called. While anyone listens, the store
   * watches for other processes' commits (PostgreSQL: LISTEN/NOTIFY; SQLite: a short poll).
   */
  watchEvents(listener: () => void): () => void;
  /** Calls `listener` with the events of each commit this process makes, until the returned function is called. */
  onEventsWritten(listener: (counts: EventCounts) => void): () => void;
  /** Removes the events that occurred before `before` (an ISO 8601 UTC time); returns how many. */
  pruneEvents(before: string): Promise<number>;
}

/** API keys as operators manage them, and the lookup of a request's key (parsed scopes and policies, never stored text). */
export interface KeyStore {
  /**
   * Stores a new key's hash under a unique name, with its expiry and scopes; throws
   * DuplicateKeyNameError when the name is taken.
   */
  createKey(name: string, keyHash: string, key: NewKey): Promise<void>;
  /** Changes what `changes` gives of the named active key, in one statement; false when no active key has that name. */
  updateKey(name: string, changes: KeyChanges): Promise<boolean>;
  /**
   * Gives the named active key the secret with hash `keyHash`; the secret it replaces keeps working
   * until `graceUntil` (an ISO 8601 UTC time), and one replaced before is forgotten. False when no
   * active key has that name.
   */
  rotateKey(name: string, keyHash: string, graceUntil: string): Promise<boolean>;
  /** Undoes the rotation of the named key to `keyHash`, whose secret nobody saw: the secret it replaced is the key's again. */
  undoRotation(name: string, keyHash: string): Promise<boolean>;
  /** Every key, oldest first. */
  listKeys(): Promise<KeyInfo[]>;
  /** Revokes the named key; false when no active key has that name. */
  revokeKey(name: string): Promise<boolean>;
  /**
   * The key with this hash, and whether it may be used at `now` (an ISO 8601 UTC time), or null
   * when no key has it: at once from a store that answers in-process (SQLite), so that a request's
   * key check takes no turn of the event loop.
   */
  findKey(keyHash: string, now: string): MaybePromise<KeyMatch | null>;
}

/** Counting a request against its key's rate-limit quotas. */
export interface RateCounter {
  /**
   * Counts one request of the named key in the current window of each unit, by the store's clock,
   * if no quota of `quotas` (requests per window, by unit) is spent; a refused request is not
   * counted. Exact across every instance on the store: one atomic statement per request (SQLite
   * runs the requests that arrive together in one transaction, one commit for all of them, and one
   * statement for a key's requests while its quotas have room for all of them).
   */
  countRequest(keyName: string, quotas: Partial<Record<RateUnit, number>>): MaybePromise<RateCount>;
}

/** Whether the store can serve, and its release. */
export interface StoreHealth {
  /** Resolves when the store answers a trivial query. */
  ping(): Promise<void>;
  /** Releases the store; further calls fail. */
  close(): Promise<void>;
}

/**
 * The one repository every store implements, SQL only behind it: the parts above, each of which a
 * caller asks for alone when it needs no other (the key check a KeyStore's findKey, the feed an EventLog).
 */
/** An endpoint's state: enabled endpoints are delivered to. */
export type EndpointStatus = 'enabled' | 'disabled';

/** The event types an endpoint may ask for: the feed's. */
export type WebhookEventType = OrderEventType;

/** A webhook endpoint as the store keeps it. */
export interface EndpointRecord {
  readonly id: string;
  readonly url: string;
  /** The event types sent to it; null for every type. */
  readonly eventTypes: readonly WebhookEventType[] | null;
  readonly description: string | null;
  readonly status: EndpointStatus;
  /** Why it was disabled, when it was not by hand: a 410, or five days of failures. */
  readonly disabledReason: string | null;
  readonly createdAt: string;
  /** The secrets that sign each attempt: the current one first, then one rotated out while its day lasts. */
  readonly secrets: readonly string[];
  /** The feed position up to which every event has been sent or handed to a retry. */
  readonly cursor: EventPosition;
  /** When its current run of failures began; null when its last attempt succeeded. */
  readonly failingSince: string | null;
}

/** A new endpoint: made enabled, with its cursor at the feed's latest position (only later events are sent). */
export interface NewEndpoint {
  readonly id: string;
  readonly url: string;
  readonly eventTypes: readonly WebhookEventType[] | null;
  readonly description: string | null;
  readonly secret: string;
  readonly createdAt: string;
  readonly cursor: EventPosition;
}

/** What a change to an endpoint may give; what it leaves undefined stays as it is. */
export interface EndpointChanges {
  readonly url?: string;
  /** null: every type. */
  readonly eventTypes?: readonly WebhookEventType[] | null;
  /** null: none. */
  readonly description?: string | null;
  /** `enabled` turns a disabled endpoint back on, with its failures forgotten. */
  readonly status?: EndpointStatus;
}

/** One attempt, as the delivery log shows it. */
export interface AttemptRecord {
  readonly eventId: string;
  /** 1 for the first attempt of the event at this endpoint. */
  readonly attempt: number;
  readonly at: string;
  /** The status the receiver answered, when it answered. */
  readonly status: number | null;
  /** Why there was no answer, or why no attempt was made (a refused address). */
  readonly error: string | null;
  readonly durationMs: number;
  /** What came of it: `delivered`; `retrying` (a retry is due); `failed` (the schedule is spent); `refused` (not sent: its address is not allowed). */
  readonly outcome: AttemptOutcome;
}

export type AttemptOutcome = 'delivered' | 'retrying' | 'failed' | 'refused';

/** A failed event waiting for its next attempt at one endpoint. */
export interface RetryRecord {
  readonly eventId: string;
  /** The body that is sent again, as it was first sent. */
  readonly body: string;
  /** Attempts made so far. */
  readonly attempts: number;
  readonly nextAt: string;
}

/** Webhook endpoints, their leases, retries and delivery log: what delivery and the endpoint operations need of a store. */
export interface WebhookStore {
  /** Makes an endpoint, enabled; answers it as stored. */
  createEndpoint(endpoint: NewEndpoint): Promise<EndpointRecord>;
  getEndpoint(id: string): Promise<EndpointRecord | null>;
  /** Up to `limit` endpoints after id `after` ('' for the first), in the order they were made. */
  listEndpoints(after: string, limit: number): Promise<EndpointRecord[]>;
  /** Changes an endpoint; null when there is none with that id. */
  updateEndpoint(id: string, changes: EndpointChanges): Promise<EndpointRecord | null>;
  /** Removes an endpoint with its retries and log; false when there was none. Nothing more is sent to it. */
  removeEndpoint(id: string): Promise<boolean>;
  /** Gives an endpoint a new secret; the one it replaces signs beside it until `previousUntil`. Null when there is none. */
  rotateEndpointSecret(id: string, secret: string, previousUntil: string): Promise<EndpointRecord | null>;
  /** Leases to `owner` for `leaseSeconds` up to `limit` enabled endpoints nobody else holds; answers every one it holds now. */
  claimEndpoints(owner: string, limit: number, leaseSeconds: number): Promise<EndpointRecord[]>;
  /** Renews `owner`'s lease of an endpoint for `leaseSeconds`: the seconds it now has, or null when it holds it no more (or the endpoint is disabled or gone). */
  renewLease(id: string, owner: string, leaseSeconds: number): Promise<number | null>;
  /** Gives `owner`'s lease of an endpoint up. */
  releaseLease(id: string, owner: string): Promise<void>;
  /** Moves the endpoint's cursor from `from` to `to`, while `owner` holds it; false when it does not, or the cursor is no longer at `from`. */
  advanceCursor(id: string, owner: string, from: EventPosition, to: EventPosition): Promise<boolean>;
  /**
   * Notes a failure at `at` (or, with null, a success), while `owner` holds the endpoint: when its
   * run of failures began, null when it has none; false when `owner` does not hold it.
   */
  noteFailure(id: string, owner: string, at: string | null): Promise<string | null | false>;
  /** Disables the endpoint for `reason`, while `owner` holds it. */
  disableEndpoint(id: string, owner: string, reason: string): Promise<boolean>;
  /** Keeps a failed event for its next attempt, while `owner` holds the endpoint. */
  scheduleRetry(id: string, owner: string, retry: RetryRecord): Promise<boolean>;
  /** Forgets a retry (delivered, or its schedule spent), while `owner` holds the endpoint. */
  dropRetry(id: string, owner: string, eventId: string): Promise<boolean>;
  /** The endpoint's retries due at `now`, soonest first. */
  dueRetries(id: string, now: string, limit: number): Promise<RetryRecord[]>;
  /** When the endpoint's next retry is due, if one waits. */
  nextRetryAt(id: string): Promise<string | null>;
  /**
   * Moves the endpoint's cursor back to just before the first event that occurred at `since` (an
   * ISO 8601 UTC time) or later, so that every event kept since then is sent again; never forward.
   * Answers how many events of its types occurred since then; null when no endpoint has that id.
   */
  replaySince(id: string, since: string): Promise<number | null>;
  /** How many endpoints are disabled. */
  disabledEndpoints(): Promise<number>;
  /** Adds one attempt to the endpoint's delivery log. */
  logAttempt(id: string, attempt: AttemptRecord): Promise<void>;
  /**
   * Adds an attempt that delivered its event to the log and moves the cursor from `from` past the
   * event to `to`, while `owner` holds the endpoint, in one write: the commonest outcome of an
   * attempt, written as one. The attempt is logged either way; false when the cursor was not moved
   * (as advanceCursor).
   */
  logAndAdvance(id: string, owner: string, attempt: AttemptRecord, from: EventPosition, to: EventPosition): Promise<boolean>;
  /** The endpoint's attempts, newest first, before log position `before` (undefined: from the newest), up to `limit`. */
  attempts(id: string, before: number | undefined, limit: number): Promise<Array<AttemptRecord & { readonly seq: number }>>;
}

export interface Store extends OrderReads, OrderMoves, Placements, OrderImport, EventLog, KeyStore, RateCounter, StoreHealth {
  /** Webhook endpoints, their leases, retries and delivery log (./webhooks.ts). */
  readonly webhooks: WebhookStore;
  /**
   * Another process that shares the store says it committed events: wakes this process's watchers
   * (watchEvents) now, and spares them a second wake for the same commit from the store's own watch.
   */
  toldOfCommit(): void;
  /**
   * The name under which this store announces its commits to other processes (PostgreSQL's
   * NOTIFY), and whose announcements its own watch ignores, since whoever commits under it wakes
   * the watchers itself; undefined where commits are not announced (SQLite's watch polls). A process
   * that tells another of its commits (the server its delivery thread) opens the other's store
   * under the same name, so that each commit wakes the other once.
   */
  readonly announcesAs: string | undefined;
  /**
   * Runs `run`, a request's dispatch or the steps of a request let on after a wait, whose reads may
   * share one read transaction with the other requests the same turn of the event loop answers:
   * the store as it stood at the turn's first read, made after every one of them had arrived.
   * Ended at the end of the turn, and before anything the process writes. A store that gains
   * nothing from it just runs `run`.
   */
  readTogether<T>(run: () => T): T;
}

/**
 * The records of an import, in file order: one at a time, or a batch at a time (as a file is read,
 * which spares a wait per record).
 */
export type ImportRecords = Iterable<ImportRecord> | AsyncIterable<ImportRecord | readonly ImportRecord[]>;
