import http from 'node:http';
import pg from 'pg';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { silentLogger } from '../../src/logger';
import type { AttemptOutcome, EventLog, Store } from '../../src/store';
import { startDelivery, type Delivery, type DeliveryOptions } from '../../src/webhooks/delivery';
import { newSecret } from '../../src/webhooks/signature';
import { eachStore, order } from '../helpers/stores';
import { until } from '../helpers/wait';

// Delivery from the feed, on each store, to real receivers on loopback: every event reaches its
// endpoint signed, failures are tried again on the schedule, a 410 disables, a refused address is
// never called, and two instances never attempt one endpoint at once.

/** A receiver on loopback: what it got, and what it answers (by default 204). */
async function receiver(answer: (count: number) => number | Promise<number> = () => 204) {
  const got: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const server = http.createServer((req, res) => {
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      got.push({ headers: req.headers, body });
      void Promise.resolve(answer(got.length)).then((status) => {
        inFlight -= 1;
        res.writeHead(status).end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    got,
    mostInFlight: () => mostInFlight,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const LOCAL = { allowHttp: true, allowPrivate: true };
/**
 * How long a wait for a delivery may take: on PostgreSQL an event shows only once every older
 * transaction of the cluster has ended, and under a loaded suite another file's can run for seconds.
 */
const SETTLES_MS = 120_000;
jest.setTimeout(180_000);
const quiet = silentLogger;

eachStore((suite) => {
  const store = (): Store => suite.store;
  const running: Delivery[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((delivery) => delivery.stop()));
  });
  const deliver = (on: Store, options: Partial<DeliveryOptions> = {}): Delivery => {
    const delivery = startDelivery({ log: on, webhooks: on.webhooks, logger: quiet, rules: LOCAL, schedule: [20, 40, 80], ...options });
    running.push(delivery);
    return delivery;
  };
  const endpoint = async (url: string, secret = newSecret()) => {
    await store().webhooks.createEndpoint({
      id: `we_${Math.random().toString(36).slice(2, 12)}`,
      url,
      eventTypes: null,
      description: null,
      secret,
      createdAt: new Date().toISOString(),
      cursor: await store().latestEventPosition(),
    });
    return secret;
  };

  test('every event committed after the endpoint was made reaches it once, in order, signed as Standard Webhooks', async () => {
    const at = await receiver();
    try {
      // Before the endpoint is made, and shown by the feed (PostgreSQL shows a commit once every older
      // writing transaction has ended): not sent.
      await store().importOrders([order({ id: 1 })]);
      await until(async () => (await store().readEvents('oldest', 10)).events.length === 1, 'the first event is shown', SETTLES_MS);
      const secret = await endpoint(at.url);
      deliver(store());
      await store().importOrders([order({ id: 2 }), order({ id: 3 })]);
      await store().cancelOrder(2);
      await until(() => at.got.length >= 3, 'three deliveries', SETTLES_MS);
      const bodies = at.got.map(({ headers, body }) => new Webhook(secret).verify(body, headers as Record<string, string>));
      expect(bodies).toEqual([
        expect.objectContaining({ type: 'order.created', orderId: 2, order: expect.objectContaining({ id: 2 }) }),
        expect.objectContaining({ type: 'order.created', orderId: 3 }),
        { id: expect.stringMatching(/^evt_\d+$/), type: 'order.cancelled', orderId: 2, occurredAt: expect.any(String) },
      ]);
      expect(at.got.map(({ headers, body }) => headers['webhook-id'] === (JSON.parse(body) as { id: string }).id)).toEqual([
        true,
        true,
        true,
      ]);
      expect(new Set(at.got.map(({ headers }) => headers['webhook-id'])).size).toBe(3);
    } finally {
      await at.close();
    }
  });

  test('a failed attempt is tried again on the schedule until it is delivered, and the log says so', async () => {
    // The first two attempts fail: a 500, then a 503 with a Retry-After of 0.
    const at = await receiver((count) => (count <= 2 ? (count === 1 ? 500 : 503) : 200));
    const outcomes: AttemptOutcome[] = [];
    try {
      await endpoint(at.url);
      deliver(store(), { onAttempt: (outcome) => outcomes.push(outcome) });
      await store().importOrders([order({ id: 7 })]);
      const [held] = await store().webhooks.listEndpoints('', 1);
      // Delivered, and what follows a delivery written: its retry dropped, its failures forgotten.
      await until(
        async () => outcomes.includes('delivered') && (await store().webhooks.getEndpoint(held!.id))?.failingSince === null,
        'the third attempt delivers',
        SETTLES_MS,
      );
      const log = await store().webhooks.attempts(held!.id, undefined, 10);
      expect(log.map(({ attempt, status, outcome }) => ({ attempt, status, outcome }))).toEqual([
        { attempt: 3, status: 200, outcome: 'delivered' },
        { attempt: 2, status: 503, outcome: 'retrying' },
        { attempt: 1, status: 500, outcome: 'retrying' },
      ]);
      expect(new Set(log.map((each) => each.eventId)).size).toBe(1);
      expect(await store().webhooks.nextRetryAt(held!.id)).toBeNull();
      expect((await store().webhooks.getEndpoint(held!.id))?.failingSince).toBeNull();
    } finally {
      await at.close();
    }
  });

  test('a 410 disables the endpoint at once; an address the rules refuse is never called, and its attempt is logged as refused', async () => {
    const gone = await receiver(() => 410);
    const strict = await receiver();
    try {
      await endpoint(gone.url);
      const disabled: string[] = [];
      deliver(store(), { onDisabled: (id) => disabled.push(id) });
      await store().importOrders([order({ id: 8 })]);
      await until(() => disabled.length === 1, 'the endpoint is disabled', SETTLES_MS);
      expect(await store().webhooks.getEndpoint(disabled[0]!)).toMatchObject({
        status: 'disabled',
        disabledReason: 'the receiver answered 410 Gone',
      });
      await Promise.all(running.splice(0).map((delivery) => delivery.stop()));

      // Loopback, on a server that does not allow private addresses: refused before any connection.
      await endpoint(strict.url);
      const outcomes: AttemptOutcome[] = [];
      deliver(store(), { rules: { allowHttp: true, allowPrivate: false }, onAttempt: (outcome) => outcomes.push(outcome) });
      await store().importOrders([order({ id: 9 })]);
      await until(() => outcomes.length > 0, 'an attempt is logged', SETTLES_MS);
      expect(outcomes[0]).toBe('refused');
      const endpoints = await store().webhooks.listEndpoints('', 10);
      const refused = endpoints.find((each) => each.url === strict.url)!;
      const [logged] = await store().webhooks.attempts(refused.id, undefined, 1);
      expect(logged).toMatchObject({ outcome: 'refused', status: null, error: expect.stringContaining('loopback') });
      expect(strict.got).toEqual([]);
    } finally {
      await gone.close();
      await strict.close();
    }
  });

  test('an endpoint whose every attempt has failed for five days is disabled at its next failure', async () => {
    const failing = await receiver(() => 500);
    try {
      await endpoint(failing.url);
      const [made] = await store().webhooks.listEndpoints('', 1);
      // Its run of failures began six days ago, as another instance recorded it.
      await store().webhooks.claimEndpoints('earlier', 1, 60);
      await store().webhooks.noteFailure(made!.id, 'earlier', new Date(Date.now() - 6 * 86_400_000).toISOString());
      await store().webhooks.releaseLease(made!.id, 'earlier');
      const disabled: string[] = [];
      deliver(store(), { onDisabled: (_id, reason) => disabled.push(reason) });
      await store().importOrders([order({ id: 11 })]);
      await until(() => disabled.length === 1, 'the endpoint is disabled', SETTLES_MS);
      expect(disabled).toEqual(['every attempt failed for five days']);
      expect(await store().webhooks.getEndpoint(made!.id)).toMatchObject({
        status: 'disabled',
        disabledReason: 'every attempt failed for five days',
      });
      expect(failing.got).toHaveLength(1);
    } finally {
      await failing.close();
    }
  });

  test('a name that resolves to a private address when an attempt is due is not called, and the attempt is logged as refused', async () => {
    // The endpoint was made while its name resolved to a public address; now it resolves to a
    // private one. The resolver answers from a table: no name is looked up, no socket opened.
    await store().webhooks.createEndpoint({
      id: 'we_rebound',
      url: 'https://rebound.example/hooks',
      eventTypes: null,
      description: null,
      secret: newSecret(),
      createdAt: new Date().toISOString(),
      cursor: await store().latestEventPosition(),
    });
    const outcomes: AttemptOutcome[] = [];
    deliver(store(), {
      rules: { allowHttp: false, allowPrivate: false },
      resolve: async () => [{ address: '10.0.0.7', family: 4 }],
      onAttempt: (outcome) => outcomes.push(outcome),
    });
    await store().importOrders([order({ id: 12 })]);
    await until(() => outcomes.length > 0, 'an attempt is logged', SETTLES_MS);
    const [logged] = await store().webhooks.attempts('we_rebound', undefined, 1);
    expect(logged).toMatchObject({
      outcome: 'refused',
      status: null,
      error: 'not sent: rebound.example resolves to 10.0.0.7 is a private address, not a public one (private addresses are not allowed)',
    });
  });

  test('endpoints at one place in the feed share its reads: a commit is read once for them all, not once each', async () => {
    const ENDPOINTS = 5;
    const at = await Promise.all(Array.from({ length: ENDPOINTS }, () => receiver()));
    let reads = 0;
    // The store's own feed, with its reads counted: those that found the feed settled. A page whose
    // events an older transaction of the cluster still holds back (PostgreSQL, while other suites
    // run) is looked at again by each worker after its own wait, since nothing signals its end.
    const log: EventLog = {
      readEvents: (after, limit) =>
        Promise.resolve(store().readEvents(after, limit)).then((page) => {
          if (page.heldBack !== true) reads += 1;
          return page;
        }),
      latestEventPosition: () => store().latestEventPosition(),
      watchEvents: (listener) => store().watchEvents(listener),
      onEventsWritten: (listener) => store().onEventsWritten(listener),
      pruneEvents: (before) => store().pruneEvents(before),
    };
    try {
      for (const one of at) await endpoint(one.url);
      const looked = new Set<string>();
      deliver(store(), { log, onLag: (id) => looked.add(id) });
      await until(() => looked.size === ENDPOINTS, 'every worker has read the feed once');
      reads = 0;
      await store().importOrders([order({ id: 11 })]);
      await until(() => at.every((one) => one.got.length === 1), 'the event reaches every endpoint', SETTLES_MS);
      // Each wake is one read for all the workers; a read per worker would be at least one for each
      // endpoint. (On SQLite the commit wakes them once; on PostgreSQL its NOTIFY wakes them again.)
      expect(reads).toBeLessThan(ENDPOINTS);
    } finally {
      await Promise.all(at.map((one) => one.close()));
    }
  });

  test('an event sent to several endpoints has its body checked and written once, and each gets the same bytes', async () => {
    const ENDPOINTS = 4;
    const at = await Promise.all(Array.from({ length: ENDPOINTS }, () => receiver()));
    const checked = new Map<string, number>();
    try {
      for (const one of at) await endpoint(one.url);
      deliver(store(), {
        check: (body) => {
          checked.set(body.id, (checked.get(body.id) ?? 0) + 1);
          return undefined;
        },
      });
      await store().importOrders([order({ id: 31 }), order({ id: 32 })]);
      await store().cancelOrder(31);
      await until(() => at.every((one) => one.got.length === 3), 'three events reach every endpoint', SETTLES_MS);
      expect([...checked.values()]).toEqual([1, 1, 1]);
      const sent = at.map((one) => one.got.map(({ body }) => body));
      for (const bodies of sent) expect(bodies).toEqual(sent[0]);
    } finally {
      await Promise.all(at.map((one) => one.close()));
    }
  });

  // Only PostgreSQL holds an event back from readers until every older transaction has ended.
  (suite.kind.name === 'postgres' ? test : test.skip)(
    'events held back by an older transaction are looked for again without a wake, and sent once they settle',
    async () => {
      const at = await receiver();
      const holder = new pg.Client({ connectionString: suite.fresh.env.PETSTORE_DATABASE_URL });
      await holder.connect();
      try {
        await endpoint(at.url);
        let looks = 0;
        // No periodic claim, so nothing but the worker itself looks again.
        deliver(store(), { claimEveryMs: 3_600_000, onLag: () => (looks += 1) });
        await until(() => looks >= 1, 'the worker has looked once');
        // A transaction older than the import takes its id and stays open: the import's event is held back.
        await holder.query('BEGIN');
        await holder.query('SELECT pg_current_xact_id()');
        const before = looks;
        await store().importOrders([order({ id: 21 })]);
        // The commit's two signals (this process's, then PostgreSQL's NOTIFY) wake the worker, which
        // finds the event held back and nothing to send. With no other commit and no claim, it then
        // looks again by itself, soon and more than once, where its idle wait would be 10 s.
        await until(() => looks >= before + 5, 'the worker keeps looking by itself', 5_000);
        expect(at.got).toHaveLength(0);
        await holder.query('COMMIT');
        await until(() => at.got.length === 1, 'the event, once settled, is sent', SETTLES_MS);
        expect(JSON.parse(at.got[0]!.body)).toEqual(expect.objectContaining({ type: 'order.created', orderId: 21 }));
      } finally {
        await holder.end();
        await at.close();
      }
    },
  );

  test('two instances deliver to one endpoint, never at once, and every event arrives', async () => {
    const slow = await receiver(() => new Promise<number>((resolve) => setTimeout(() => resolve(204), 5)));
    const other = await suite.fresh.another();
    try {
      await endpoint(slow.url);
      deliver(store());
      deliver(other);
      await store().importOrders(Array.from({ length: 20 }, (_, i) => order({ id: 100 + i })));
      for (let id = 100; id < 110; id += 1) await other.cancelOrder(id);
      await until(() => new Set(slow.got.map(({ headers }) => headers['webhook-id'])).size >= 30, 'thirty events delivered', SETTLES_MS);
      expect(slow.mostInFlight()).toBe(1);
    } finally {
      await Promise.all(running.splice(0).map((delivery) => delivery.stop()));
      await other.close();
      await slow.close();
    }
  });
});
