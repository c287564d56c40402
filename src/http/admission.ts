import type { ServerResponse } from 'node:http';
import type { AdmissionLimits } from '../config';
import { ApiError } from '../errors';
import type { Operation } from '../openapi';

/** What the admission step reports, for the metrics. */
export interface AdmissionEvents {
  /** A request was shed: it waited its longest and got a 503; its handler never ran. */
  onShed?: (operationId: string) => void;
  /** The number of expensive requests running changed. */
  onRunning?: (count: number) => void;
  /** The number of expensive requests waiting for their turn changed. */
  onWaiting?: (count: number) => void;
  /** A request was admitted after waiting this long (0 when it did not wait). */
  onWaited?: (seconds: number) => void;
}

/** Seconds a shed client is told to wait before it tries again (or tries another instance). */
const RETRY_AFTER_SECONDS = 1;

/**
 * The longest an instance starts expensive work in one turn of its event loop, in milliseconds.
 * Past it, what is still to start waits for the next turn, so the loop reads its sockets between
 * and a cheap request that came meanwhile is answered within about this long.
 */
export const TURN_SLICE_MS = 10;

/** One instance's admission of expensive work, shared by every version it serves. */
export interface Admission {
  /**
   * Admits a request to an expensive `operation` (isExpensive: the dispatcher asks only for those):
   * at once when fewer than the limit are running; otherwise once one ends, in arrival order, or,
   * past the longest wait, never: it rejects with a 503 `service_unavailable` and `Retry-After`.
   * An admitted request holds its place until its response is over (sent, or abandoned).
   */
  admit(operation: Operation, res: ServerResponse): Promise<void> | undefined;
  /**
   * Resolves in a later turn of the event loop, the first whose slice has room: a streamed list
   * waits for it before its next chunk, so that the chunks of the lists running and the lists
   * starting share each turn's first TURN_SLICE_MS, and a turn ends soon however many run.
   */
  readonly laterTurn: () => Promise<void>;
}

/**
 * Whether an operation's work grows with the store: its success body is an array, or holds one (a
 * list, a page). A read that may wait for something to happen (a `wait` parameter: the change feed)
 * is not: it holds no work while it waits, and has its own bound.
 */
export function isExpensive(operation: Operation): boolean {
  if (operation.parameters.some((parameter) => parameter.in === 'query' && parameter.name === 'wait')) return false;
  const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))?.[1];
  const schema = success?.content?.['application/json']?.schema;
  if (schema === undefined || '$ref' in schema) return false;
  if (schema.type === 'array') return true;
  return Object.values(schema.properties ?? {}).some((property) => !('$ref' in property) && property.type === 'array');
}

/**
 * A fixed limit on the expensive requests running at once, with a bounded, first-come queue in front
 * of it. Cheap requests (a cancel, a miss, a 401, the infrastructure endpoints) never pass through
 * it, so a flood of lists never holds them back.
 *
 * The limit alone does not bound a turn of the event loop: a page read from SQLite runs to its end
 * at once and gives its place back before the next socket is read, so every page that came in one
 * read of the sockets would run in that turn, one after another (at 256 connections, about 170 ms
 * of pages before a `/healthz` that came just after them is read). So expensive work starts in a
 * turn only for its first TURN_SLICE_MS; what comes later waits in the queue for the next turn.
 * `clock` reads the time in milliseconds; a test gives its own, to spend a slice when it chooses.
 */
export function createAdmission(
  limits: AdmissionLimits,
  events: AdmissionEvents = {},
  clock: () => number = () => performance.now(),
): Admission {
  let running = 0;
  /** Requests waiting for a place, oldest first; `head` is the index of the oldest still waiting. */
  const waiting: Array<Waiter | undefined> = [];
  let head = 0;
  /** How many are waiting (the queue's slots left empty by a shed or a departure do not count). */
  let queued = 0;
  const queue = (change: 1 | -1): void => {
    queued += change;
    events.onWaiting?.(queued);
  };
  /** When this turn's expensive work began; meaningful while `turning`. */
  let sliceStart = 0;
  /** Expensive work started in this turn of the loop, and `nextTurn` is set to run on the next. */
  let turning = false;
  /** Whether expensive work may start now: the first start of a turn opens its slice. */
  const inSlice = (): boolean => {
    if (!turning) {
      turning = true;
      sliceStart = clock();
      setImmediate(nextTurn);
      return true;
    }
    return clock() - sliceStart < TURN_SLICE_MS;
  };
  /**
   * Lets on the oldest that waits (`letOn`), one after another, while `waits` says one does and
   * this turn's slice lasts: each once the one before has gone on (it goes on in a microtask queued
   * before the next step), so the slice's clock counts what those before it ran at once. Calls
   * `stopped` when it stops.
   */
  function oneAfterAnother(waits: () => boolean, letOn: () => void, stopped: () => void): void {
    const step = (): void => {
      if (!waits() || !inSlice()) return stopped();
      letOn();
      queueMicrotask(step);
    };
    step();
  }

  /** The loop has read its sockets again: a new slice, and the oldest waiting take the free places. */
  function nextTurn(): void {
    turning = false;
    fill();
  }
  /** Whether `fill` is letting the waiting on: a place freed meanwhile is filled by it. */
  let filling = false;
  /** The oldest waiting take the free places while this turn's slice lasts. */
  function fill(): void {
    filling = true;
    oneAfterAnother(
      () => queued > 0 && running < limits.limit,
      handOver,
      () => (filling = false),
    );
  }

  const start = (res: ServerResponse, waitedMs: number): void => {
    running += 1;
    events.onRunning?.(running);
    events.onWaited?.(waitedMs / 1000);
    // Its place is given up as soon as its response is handed to the connection whole ('finish'),
    // or the connection is gone ('close'): a keep-alive client's next request may come before
    // 'close' does, and must not wait for it.
    let ended = false;
    const once = (): void => {
      if (ended) return;
      ended = true;
      res.off('finish', once);
      res.off('close', once);
      end();
    };
    res.on('finish', once);
    res.on('close', once);
  };
  /** The oldest request still waiting, taken out of the queue; undefined when none waits. */
  const oldest = (): Waiter | undefined => {
    let next: Waiter | undefined;
    while (next === undefined && head < waiting.length) {
      next = waiting[head];
      waiting[head] = undefined;
      head += 1;
    }
    if (head === waiting.length) {
      waiting.length = 0;
      head = 0;
    }
    return next;
  };
  /**
   * A request's place is free: the oldest waiting take it now if this turn's slice allows, else
   * next turn (nextTurn fills every place then free, while its slice lasts).
   */
  function end(): void {
    running -= 1;
    if (queued > 0 && !filling && inSlice()) fill();
    else events.onRunning?.(running);
  }
  /** The oldest request still waiting takes a free place. */
  function handOver(): void {
    const next = oldest();
    if (next === undefined) {
      events.onRunning?.(running);
      return;
    }
    queue(-1);
    clearTimeout(next.timer);
    start(next.res, clock() - next.since);
    next.admit();
  }

  /** Streamed lists waiting to write their next chunk, oldest first. */
  const continuing: Array<() => void> = [];
  /** Whether `continueSome` is set to run in the next turn. */
  let continuingNext = false;
  const continueNextTurn = (): void => {
    if (continuingNext) return;
    continuingNext = true;
    setImmediate(continueSome);
  };
  /**
   * Lets the lists that waited for this turn go on, oldest first, one after another while its slice
   * lasts; the rest wait for the next turn, still ahead of those that asked since, so that none is
   * passed over turn after turn.
   */
  function continueSome(): void {
    continuingNext = false;
    let due = continuing.length;
    oneAfterAnother(
      () => due > 0,
      () => {
        due -= 1;
        continuing.shift()?.();
      },
      () => {
        if (continuing.length > 0) continueNextTurn();
      },
    );
  }

  return {
    laterTurn: () =>
      new Promise<void>((resolve) => {
        continuing.push(resolve);
        continueNextTurn();
      }),
    admit(operation, res) {
      if (running < limits.limit && queued === 0 && inSlice()) {
        start(res, 0);
        return undefined;
      }
      const shed = (): ApiError => {
        events.onShed?.(operation.operationId);
        return new ApiError('service_unavailable', `The server is busy; retry in ${RETRY_AFTER_SECONDS} s`, {
          'Retry-After': String(RETRY_AFTER_SECONDS),
        });
      };
      // A full queue cannot take it: shed at once, rather than after a wait that cannot end well.
      if (queued >= limits.queue) return Promise.reject(shed());
      queue(1);
      return new Promise<void>((resolve, reject) => {
        const at = waiting.length;
        const waiter: Waiter = {
          res,
          since: clock(),
          admit: resolve,
          timer: setTimeout(() => {
            waiting[at] = undefined;
            queue(-1);
            reject(shed());
          }, limits.maxWaitMs),
        };
        waiting.push(waiter);
        // A client that goes away while it waits gives its place up.
        res.once('close', () => {
          if (waiting[at] !== waiter) return;
          waiting[at] = undefined;
          queue(-1);
          clearTimeout(waiter.timer);
        });
      });
    },
  };
}

interface Waiter {
  res: ServerResponse;
  since: number;
  admit: () => void;
  timer: NodeJS.Timeout;
}
