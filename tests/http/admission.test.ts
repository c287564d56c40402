import { IncomingMessage, ServerResponse } from 'node:http';
import net from 'node:net';
import { loadDocument, specPath } from '../../src/contract/document';
import { createAdmission, isExpensive, TURN_SLICE_MS } from '../../src/http/admission';
import { createMetrics } from '../../src/metrics';
import { createOpenApi } from '../../src/openapi';
import { listen } from '../helpers/app';
import { addKey, freshStore, order, rowsOf } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';
import { until } from '../helpers/wait';
import { dechunk } from '../helpers/chunked';

// Admission control: lists and pages run a bounded number at a time; more wait a bounded time, or
// are shed with a 503 and Retry-After before their handler runs; everything else is never held back.
const tmp = tempDir();
afterAll(tmp.cleanup);

const ORDERS = 100_000;

/** The turns of the event loop, counted by an immediate that schedules itself: it runs once a turn, until `stop`. */
function countTurns(): { turn: () => number; stop: () => void } {
  let turn = 0;
  let counting = true;
  const count = (): void => {
    turn += 1;
    if (counting) setImmediate(count);
  };
  setImmediate(count);
  return { turn: () => turn, stop: () => (counting = false) };
}

test('lists and pages are the expensive operations; the feed, one order, a cancel and the pet are not', async () => {
  const expensive: string[] = [];
  for (const version of ['v1', 'v2'] as const) {
    const api = await createOpenApi(loadDocument(specPath(version)), { apiRoot: `/${version}`, undeclaredQuery: 'ignore' });
    for (const operation of api.operations) if (isExpensive(operation)) expensive.push(`${version} ${operation.operationId}`);
  }
  expect(expensive).toEqual(['v1 listOrders', 'v2 listOrders']);
});

test('the running and waiting counts are reported once per change, and the oldest waiting request takes a freed place', async () => {
  const api = await createOpenApi(loadDocument(specPath('v1')), { apiRoot: '/v1', undeclaredQuery: 'ignore' });
  const list = api.operations.find((operation) => operation.operationId === 'listOrders')!;
  const reports: number[] = [];
  const waiting: number[] = [];
  const waited: number[] = [];
  // The slices' clock stands still: on a busy machine a slice could pass between two steps, and a
  // freed place would then be taken on the next turn (reported as a 0, then a 1), which is right
  // but not what this test is about.
  const admission = createAdmission(
    { limit: 1, maxWaitMs: 60_000, queue: 10 },
    { onRunning: (count) => reports.push(count), onWaiting: (count) => waiting.push(count), onWaited: (seconds) => waited.push(seconds) },
    () => 0,
  );
  const response = () => new ServerResponse(new IncomingMessage(new net.Socket()));
  const [first, second, third] = [response(), response(), response()];
  const admitted: string[] = [];

  expect(admission.admit(list, first)).toBeUndefined();
  const secondTurn = admission.admit(list, second)!.then(() => admitted.push('second'));
  const thirdTurn = admission.admit(list, third)!.then(() => admitted.push('third'));
  first.emit('finish');
  await secondTurn;
  second.emit('close');
  await thirdTurn;
  third.emit('finish');
  third.emit('close');

  expect(admitted).toEqual(['second', 'third']);
  expect(reports).toEqual([1, 1, 1, 0]);
  expect(waiting).toEqual([1, 2, 1, 0]);
  expect(waited).toHaveLength(3);
  expect(waited[0]).toBe(0);
});

test('work that runs to its end at once starts for one slice of each turn of the event loop; the rest waits its turn, in order', async () => {
  const api = await createOpenApi(loadDocument(specPath('v2')), { apiRoot: '/v2', undeclaredQuery: 'ignore' });
  const listOrders = api.operations.find((operation) => operation.operationId === 'listOrders')!;
  const admission = createAdmission({ limit: 1000, maxWaitMs: 60_000, queue: 1000 });
  const { turn, stop } = countTurns();
  const WORK_MS = 2;
  const PAGES = 40;
  const ran: Array<{ page: number; turn: number }> = [];
  const runs = Array.from({ length: PAGES }, (_, page) => {
    const res = new ServerResponse(new IncomingMessage(new net.Socket()));
    // A page read and written at once: its work, then its response handed over whole.
    const work = (): void => {
      const until = performance.now() + WORK_MS;
      while (performance.now() < until);
      ran.push({ page, turn: turn() });
      res.emit('finish');
    };
    const admitted = admission.admit(listOrders, res);
    return admitted === undefined ? Promise.resolve(work()) : admitted.then(work);
  });
  await Promise.all(runs);
  stop();

  expect(ran.map((each) => each.page)).toEqual(Array.from({ length: PAGES }, (_, page) => page));
  const perTurn = new Map<number, number>();
  for (const each of ran) perTurn.set(each.turn, (perTurn.get(each.turn) ?? 0) + 1);
  // Each turn starts work until its slice is spent: the one that passes the slice is its last.
  expect(Math.max(...perTurn.values())).toBeLessThanOrEqual(TURN_SLICE_MS / WORK_MS + 1);
  expect(perTurn.size).toBeGreaterThan(1);
});

/** An admission of v1's list whose slices' clock moves only when the test moves it (`spend`): a busy machine cannot spend a slice for it. */
async function admissionOnTurns(limit: number) {
  const api = await createOpenApi(loadDocument(specPath('v1')), { apiRoot: '/v1', undeclaredQuery: 'ignore' });
  const list = api.operations.find((operation) => operation.operationId === 'listOrders')!;
  let now = 0;
  const admission = createAdmission({ limit, maxWaitMs: 60_000, queue: 100 }, {}, () => now);
  const turns = countTurns();
  await new Promise((resolve) => setImmediate(resolve));
  return { list, admission, spend: (ms: number) => (now += ms), ...turns };
}

const response = () => new ServerResponse(new IncomingMessage(new net.Socket()));

test("places freed past a turn's slice are all taken on the next turn while its slice lasts, not one a turn", async () => {
  const LIMIT = 4;
  const { list, admission, spend, turn, stop } = await admissionOnTurns(LIMIT);
  // Streamed lists: each runs across turns, so its end comes in a later turn than its start.
  const running = Array.from({ length: LIMIT }, response);
  for (const res of running) expect(admission.admit(list, res)).toBeUndefined();
  const admittedIn: number[] = [];
  const waiting = Array.from({ length: LIMIT }, () => admission.admit(list, response())!.then(() => admittedIn.push(turn())));
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));

  // In one turn: the first ends as the slice opens, and its place is taken at once; the other three
  // end after the slice is spent, so their places wait for the next turn.
  const endedIn = turn();
  running[0]!.emit('finish');
  spend(TURN_SLICE_MS);
  for (const res of running.slice(1)) res.emit('finish');
  await Promise.all(waiting);
  stop();

  expect(admittedIn).toEqual([endedIn, endedIn + 1, endedIn + 1, endedIn + 1]);
});

test('places left free as a turn begins are all taken in it while its slice lasts, not one a turn', async () => {
  const { list, admission, spend, turn, stop } = await admissionOnTurns(4);

  // A burst read in one turn: the first list starts, and runs past the turn's slice (its first chunk
  // on a slow host); the three after it find the slice spent, and wait with places free.
  const arrivedIn = turn();
  expect(admission.admit(list, response())).toBeUndefined();
  spend(TURN_SLICE_MS);
  const admittedIn: number[] = [];
  await Promise.all([1, 2, 3].map(() => admission.admit(list, response())!.then(() => admittedIn.push(turn()))));
  stop();

  expect(admittedIn).toEqual([arrivedIn + 1, arrivedIn + 1, arrivedIn + 1]);
});

test("a streamed list's next chunk waits for a later turn whose slice has room, so chunks and starts share each turn's slice", async () => {
  const { list, admission, spend, turn, stop } = await admissionOnTurns(10);

  // This turn's slice is spent by a list that started in it.
  const startedIn = turn();
  expect(admission.admit(list, response())).toBeUndefined();
  spend(TURN_SLICE_MS);
  // Three lists write two more chunks each, each chunk 0.6 of a slice's work: two fit in a slice.
  const wrote: Array<{ list: number; turn: number }> = [];
  await Promise.all(
    [1, 2, 3].map(async (each) => {
      for (let chunk = 0; chunk < 2; chunk += 1) {
        await admission.laterTurn();
        spend(TURN_SLICE_MS * 0.6);
        wrote.push({ list: each, turn: turn() });
      }
    }),
  );
  stop();

  // The third waits for the next turn, and goes first in it: none is passed over by those that asked since.
  expect(wrote.map((each) => each.list)).toEqual([1, 2, 3, 1, 2, 3]);
  expect(wrote.map((each) => each.turn)).toEqual([1, 1, 2, 2, 3, 3].map((later) => startedIn + later));
});

test('past its limit a list waits, then is shed with a 503 and Retry-After; a full queue sheds at once; cheap requests pass', async () => {
  const { store, file } = freshStore(tmp.dir);
  const key = await addKey(store);
  await store.importOrders(Array.from({ length: ORDERS }, (_, i) => order({ id: i + 1 })));
  const metrics = createMetrics();
  const server = await listen({ store, metrics, admission: { limit: 1, maxWaitMs: 1000, queue: 1 } });
  const auth = { Authorization: `Bearer ${key}` };
  const { port } = new URL(server.url);
  try {
    // A client that asks for the whole list and does not read it holds the one place.
    const stalled = net.connect(Number(port), '127.0.0.1');
    let received = Buffer.alloc(0);
    stalled.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    const ended = new Promise<void>((resolve) => stalled.on('end', () => resolve()));
    stalled.pause();
    stalled.write(
      `GET /v1/store/orders HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`,
    );
    const running = async () => /^petstore_admitted_requests 1$/m.test(await metrics.registry.metrics());
    await until(running, 'the stalled list is admitted');
    const before = rowsOf(file);

    // One more list waits its longest, then is shed; one more than the queue holds is shed at once.
    const waitedFrom = performance.now();
    const waited = fetch(`${server.url}/v2/store/orders?limit=10`, { headers: auth }).then(async (res) => ({
      res,
      body: await res.json(),
      ms: performance.now() - waitedFrom,
    }));
    let waitedEnded = false;
    // Awaited below; should an assertion before that fail, its end must not surface in another test.
    waited.then(() => (waitedEnded = true)).catch(() => undefined);
    const waitingOne = async () => /^petstore_admission_waiting_requests 1$/m.test(await metrics.registry.metrics());
    await until(waitingOne, 'the second list waits for its turn');
    const full = await fetch(`${server.url}/v1/store/orders`, { headers: auth });
    expect(full.status).toBe(503);
    expect(full.headers.get('retry-after')).toBe('1');
    expect(await full.json()).toEqual({ code: 'service_unavailable', message: 'The server is busy; retry in 1 s', status: 503 });
    // At once: while the list before it still waits out its turn.
    expect(waitedEnded).toBe(false);

    // Meanwhile the cheap requests are answered: health, a cancel, one order, a miss.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/v1/store/orders/7`, { method: 'DELETE', headers: auth })).status).toBe(204);
    expect((await fetch(`${server.url}/v2/store/orders/8`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${server.url}/v1/store/orders/999999`, { method: 'DELETE', headers: auth })).status).toBe(404);

    const shed = await waited;
    expect(shed.res.status).toBe(503);
    expect(shed.res.headers.get('retry-after')).toBe('1');
    expect(shed.body).toMatchObject({ code: 'service_unavailable', status: 503 });
    // It waited its longest, and no longer than a busy machine needs to shed it then.
    expect(shed.ms).toBeGreaterThanOrEqual(1000);
    expect(shed.ms).toBeLessThan(10_000);
    // The shed requests changed nothing: only the cancel did.
    expect(
      rowsOf(file)
        .filter((row) => row.status === 'cancelled')
        .map((row) => row.id),
    ).toEqual([7]);
    expect(before.filter((row) => row.status === 'cancelled')).toEqual([]);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^petstore_requests_shed_total\{operation="listOrders"\} 2$/m);

    // The admitted list is not cut short: read now, it is whole.
    stalled.resume();
    await ended;
    const body = received.toString('utf8');
    expect(body).toMatch(/^HTTP\/1\.1 200 /);
    const payload = body.slice(body.indexOf('\r\n\r\n') + 4);
    const json = /transfer-encoding: chunked/i.test(body) ? dechunk(payload) : payload;
    expect((JSON.parse(json) as unknown[]).length).toBe(ORDERS);

    // Its place is free again: the next list runs.
    await until(async () => /^petstore_admitted_requests 0$/m.test(await metrics.registry.metrics()), 'the place is free');
    expect((await fetch(`${server.url}/v2/store/orders?limit=10`, { headers: auth })).status).toBe(200);
  } finally {
    await server.close();
    await store.close();
  }
}, 30_000);
