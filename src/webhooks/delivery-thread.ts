import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isMainThread, parentPort, threadId, Worker, workerData, type MessagePort } from 'node:worker_threads';
import type { Config, WebhookOptions } from '../config';
import { loadDocument, specPath } from '../contract/document';
import { webhookBodyCheck } from '../contract/webhooks';
import { createLogger, logOutputOf, type Logger } from '../logger';
import type { AttemptOutcome, Store, WebhookStore } from '../store';
import { openStore } from '../store/open';
import { errorMessage } from '../thrown';
import { CLAIM_EVERY_MS, startDelivery, type Delivery } from './delivery';

/**
 * Delivery in a thread of its own: the server's event loop answers the API, and a worker thread
 * with its own connection to the store sends the webhooks (startDelivery, unchanged). An attempt's
 * HTTP request, its signature, its body's check and its bookkeeping then take nothing from the
 * loop that answers requests; on the loop, a delivery costs a message now and then.
 *
 * - **Wakes.** Each commit of events this process makes is told to the thread at once, as it was
 *   told to delivery in the loop; the thread's own store hears other processes' commits itself.
 *   It is opened under the server's store's name for its commits (Store.announcesAs), so the
 *   server's own NOTIFYs, of commits already told, do not wake it a second time.
 * - **Metrics and logs** come back to the server's registry and log output in messages: the
 *   metrics a few times a second, the thread's log lines as they are written.
 * - **A thread that fails** is logged and started again a second later: its endpoints' leases
 *   keep every event for it meanwhile (or for another instance, once they run out).
 * - **Only when there is work.** The thread starts once the store has an enabled endpoint, looked
 *   for at start, every few seconds, and at a commit of events (at most once a second): a server
 *   whose store has no endpoint spends no memory on one.
 * - **Behind the API for the cores.** The thread lowers its own scheduling priority (its nice
 *   value, PETSTORE_WEBHOOK_NICE, 10 as shipped). When a core is free it runs at once; when the
 *   API's requests want every core, they run first and delivery takes what is left, so a burst of
 *   deliveries waits a moment rather than slowing the answers.
 * - **stop()** ends the thread's workers, gives their endpoints up and closes its store, as
 *   delivery's stop() did; a SIGKILL ends the thread with the process.
 */
export interface DeliveryThreadOptions {
  /** The server's configuration: the thread opens the same store with it. */
  readonly config: Config;
  /** Where webhooks may be sent, the retries and the attempt's time, as the server was given them. */
  readonly webhooks: WebhookOptions;
  readonly logger: Logger;
  /**
   * The store this process commits through: its commits wake the thread at once, and the thread's
   * store takes its name (Store.announcesAs), so that its NOTIFYs do not wake the thread again.
   */
  readonly log: Pick<Store, 'onEventsWritten' | 'announcesAs'>;
  /** The store's endpoints: the thread starts once one is enabled. */
  readonly webhookStore: Pick<WebhookStore, 'listEndpoints'>;
  readonly onAttempt?: (outcome: AttemptOutcome) => void;
  readonly onLag?: (endpointId: string, seconds: number) => void;
  readonly onLagGone?: (endpointId: string) => void;
  readonly onDisabledCount?: (count: number) => void;
}

/** What the thread is started with. */
interface ThreadData {
  readonly role: typeof ROLE;
  readonly config: Config;
  readonly webhooks: WebhookOptions;
  /** The server's store's name for its commits (Store.announcesAs), which the thread's store takes. */
  readonly announceAs: string | undefined;
}

/** What the thread tells the server: its metrics since the last report, and its log lines. */
type FromThread =
  | {
      readonly kind: 'metrics';
      readonly attempts: readonly AttemptOutcome[];
      readonly lags: ReadonlyArray<readonly [string, number]>;
      readonly gone: readonly string[];
      readonly disabled: number | undefined;
    }
  | { readonly kind: 'log'; readonly line: string };

/** What the server tells the thread: events were committed here, or stop. */
type ToThread = { readonly kind: 'changed' } | { readonly kind: 'stop' };

const ROLE = 'petstore-orders webhook delivery';
/** How often the thread reports its metrics, at most. */
const METRICS_EVERY_MS = 100;
/** The most PostgreSQL connections the thread's pool holds (fewer when PETSTORE_PG_POOL_SIZE is smaller). */
const DELIVERY_POOL_SIZE = 4;
/**
 * The young generation of the thread's heap, at most: delivery's objects live for an attempt, and
 * the default (16 MB a semi-space) would add about 25 MB to the process's memory for nothing.
 */
const YOUNG_GENERATION_MB = 4;
/** How long a failed thread waits before it is started again. */
const RESTART_AFTER_MS = 1000;
/**
 * The thread's name, which Node.js 24 gives the operating system's thread, so that `top -H` and
 * `ps -L` show delivery's CPU apart from the event loop's (`MainThread`).
 */
export const DELIVERY_THREAD_NAME = 'webhooks';

/** Starts delivery in a worker thread; the returned Delivery stops it. */
export function startDeliveryThread(options: DeliveryThreadOptions): Delivery {
  const { logger, config } = options;
  const output = logOutputOf(logger);
  // Its own PostgreSQL pool, small: delivery's statements are short, and a receiver is never waited on holding one.
  const threadConfig: Config = {
    ...config,
    postgres: { ...config.postgres, poolSize: Math.min(config.postgres.poolSize, DELIVERY_POOL_SIZE) },
  };
  const data: ThreadData = { role: ROLE, config: threadConfig, webhooks: options.webhooks, announceAs: options.log.announcesAs };
  let worker: Worker | undefined;
  let exited: Promise<void> = Promise.resolve();
  let stopping = false;
  let restart: NodeJS.Timeout | undefined;

  const onMessage = (message: FromThread): void => {
    if (message.kind === 'log') {
      // The thread's lines, already formatted as the server's: written beside its own.
      if (output !== undefined) output.write(message.line);
      return;
    }
    for (const outcome of message.attempts) options.onAttempt?.(outcome);
    for (const [endpoint, seconds] of message.lags) options.onLag?.(endpoint, seconds);
    for (const endpoint of message.gone) options.onLagGone?.(endpoint);
    if (message.disabled !== undefined) options.onDisabledCount?.(message.disabled);
  };

  const start = (): void => {
    const thread = new Worker(path.join(__dirname, 'delivery-thread.js'), {
      workerData: data,
      name: DELIVERY_THREAD_NAME,
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    worker = thread;
    thread.on('message', onMessage);
    thread.on('error', (err) => logger.error({ err: errorMessage(err) }, 'webhook delivery failed; it starts again'));
    exited = new Promise((resolve) => {
      thread.once('exit', (code) => {
        worker = undefined;
        resolve();
        if (stopping) return;
        logger.error({ code }, 'webhook delivery stopped; it starts again');
        restart = setTimeout(start, RESTART_AFTER_MS);
        restart.unref();
      });
    });
  };
  // Until the thread has started: whether an enabled endpoint exists yet.
  let started = false;
  let looking: Promise<void> | undefined;
  let lookedAt = 0;
  const look = (): void => {
    if (started || stopping || looking !== undefined) return;
    lookedAt = Date.now();
    looking = anyEnabled(options.webhookStore)
      .then((found) => {
        if (!found || started || stopping) return;
        started = true;
        clearInterval(lookEvery);
        start();
      })
      .catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'webhook endpoints could not be read; trying again'))
      .finally(() => (looking = undefined));
  };
  const lookEvery = setInterval(look, CLAIM_EVERY_MS);
  lookEvery.unref();
  look();

  const stopChanges = options.log.onEventsWritten(() => {
    if (worker !== undefined) worker.postMessage({ kind: 'changed' } satisfies ToThread);
    // An endpoint made since the last look (through the API, the CLI or another instance) is found by the next commit.
    else if (Date.now() - lookedAt > 1000) look();
  });

  return {
    wake: () => (worker !== undefined ? worker.postMessage({ kind: 'changed' } satisfies ToThread) : look()),
    async stop() {
      stopping = true;
      clearInterval(lookEvery);
      clearTimeout(restart);
      stopChanges();
      await looking;
      worker?.postMessage({ kind: 'stop' } satisfies ToThread);
      await exited;
    },
  };
}

/** Whether the store has an enabled endpoint. */
async function anyEnabled(webhooks: Pick<WebhookStore, 'listEndpoints'>): Promise<boolean> {
  for (let after = ''; ;) {
    const page = await webhooks.listEndpoints(after, 100);
    if (page.some((endpoint) => endpoint.status === 'enabled')) return true;
    const last = page.at(-1);
    if (last === undefined) return false;
    after = last.id;
  }
}

/** The thread itself: delivery from its own store, its metrics and logs sent to the server. */
async function runThread(port: MessagePort, data: ThreadData): Promise<void> {
  const send = (message: FromThread): void => port.postMessage(message);
  // The server's logger, writing each line to the server rather than to a descriptor of its own.
  const logger = createLogger(data.config.logLevel, { write: (line: string) => send({ kind: 'log', line }) });
  /** What is running, once it is: a stop may come at any moment of the start. */
  const running: { store?: Store; delivery?: Delivery } = {};
  let stopping = false;

  // Metrics gathered for a report.
  let attempts: AttemptOutcome[] = [];
  let lags = new Map<string, number>();
  let gone: string[] = [];
  let disabled: number | undefined;
  let report: NodeJS.Timeout | undefined;
  const flush = (): void => {
    report = undefined;
    if (attempts.length === 0 && lags.size === 0 && gone.length === 0 && disabled === undefined) return;
    send({ kind: 'metrics', attempts, lags: [...lags], gone, disabled });
    attempts = [];
    lags = new Map();
    gone = [];
    disabled = undefined;
  };
  const soon = (): void => {
    report ??= setTimeout(flush, METRICS_EVERY_MS);
  };

  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await running.delivery?.stop();
    await running.store?.close();
    clearTimeout(report);
    flush();
    // Every message is sent; the thread ends here, whatever handle a driver left open.
    process.exit(0);
  };
  port.on('message', (message: ToThread) => {
    if (message.kind === 'stop') void stop();
    // The server committed events: its delivery is woken once, not again by the store's own watch.
    else running.store?.toldOfCommit();
  });

  behindTheApi(data.webhooks.nice, logger);
  // The server tells the thread of its commits itself: under its name, their NOTIFYs wake nobody here.
  const opened = await openStore(data.config, logger, { announceAs: data.announceAs });
  running.store = opened;
  const check = await webhookBodyCheck(loadDocument(specPath('v3')), 'v3');
  if (stopping) return;
  logger.info({ threadId }, 'webhook delivery started in its own thread');
  running.delivery = startDelivery({
    // The store's own watch hears other processes' commits; the server's come as messages (above).
    log: opened,
    webhooks: opened.webhooks,
    logger,
    rules: data.webhooks,
    schedule: data.webhooks.retrySchedule,
    attemptTimeoutMs: data.webhooks.attemptTimeoutMs,
    check,
    onAttempt: (outcome) => {
      attempts.push(outcome);
      soon();
    },
    onLag: (endpoint, seconds) => {
      lags.set(endpoint, seconds);
      gone = gone.filter((one) => one !== endpoint);
      soon();
    },
    onLagGone: (endpoint) => {
      lags.delete(endpoint);
      gone.push(endpoint);
      soon();
    },
    onDisabledCount: (count) => {
      disabled = count;
      soon();
    },
  });
}

/**
 * Lowers this thread's priority to the nice value it is given, never raising it above the
 * server's. On Linux a nice value belongs to a thread, and `os.setPriority` given the thread's own
 * id (from /proc/thread-self) sets this thread's alone. Elsewhere, or where the kernel refuses,
 * delivery runs at the server's priority and says so.
 */
function behindTheApi(nice: number, logger: Logger): void {
  if (process.platform !== 'linux') return;
  try {
    const tid = Number(path.basename(fs.readlinkSync('/proc/thread-self')));
    if (os.getPriority(tid) < nice) os.setPriority(tid, nice);
  } catch (err) {
    logger.warn({ err: errorMessage(err) }, "webhook delivery runs at the server's priority");
  }
}

/** Whether a worker's data is this thread's: a thread started by startDeliveryThread. */
function isThreadData(data: unknown): data is ThreadData {
  return typeof data === 'object' && data !== null && 'role' in data && data.role === ROLE;
}

const given: unknown = workerData;
if (!isMainThread && parentPort !== null && isThreadData(given)) {
  // A failure to start is the thread's error: the server logs it and starts the thread again.
  void runThread(parentPort, given);
}
