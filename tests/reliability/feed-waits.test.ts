import path from 'node:path';
import { cliAsync, serve, seedWithCli } from '../helpers/cli';
import { tempDir } from '../helpers/temp-dir';
import { until } from '../helpers/wait';

// The change feed's waiting requests in a served process: woken by another process's commit (the
// CLI), counted in /metrics, and every one answered at once by SIGTERM.
const tmp = tempDir();
afterAll(tmp.cleanup);

const SHUTDOWN_MS = 5000;

interface FeedPage {
  events: Array<{ type: string; orderId: number }>;
  nextCursor: string;
}

/** The value of a metric line on /metrics, or undefined. */
async function metric(url: string, line: RegExp): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = line.exec(text);
  return match === null ? undefined : Number(match[1]);
}

test('a CLI ship in another process wakes a waiting request; SIGTERM answers 50 waiting requests at once, each completely', async () => {
  const db = path.join(tmp.dir, 'feed.db');
  const key = seedWithCli(db, 'feed', 3);
  const server = await serve(db, [], { PETSTORE_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_MS) });
  const headers = { Authorization: `Bearer ${key}` };
  const feed = async (query: string): Promise<{ status: number; body: FeedPage }> => {
    const res = await fetch(`${server.url}/v2/store/order-events?${query}`, { headers });
    return { status: res.status, body: (await res.json()) as FeedPage };
  };
  try {
    const { body: latest } = await feed('from=latest');

    // Another process ships while a request waits: the server's poll of the file wakes it.
    const waiting = feed(`after=${latest.nextCursor}&wait=20`);
    await until(async () => (await metric(server.url, /^petstore_order_event_waits (\d+)$/m)) === 1, 'the request waits');
    const shipped = await cliAsync(['--db', db, 'orders', 'ship', '2']);
    expect(shipped.status).toBe(0);
    const woken = await waiting;
    expect(woken.status).toBe(200);
    expect(woken.body.events.map(({ type, orderId }) => `${type} ${orderId}`)).toEqual(['order.shipped 2']);

    // This process's own commits are counted by type.
    expect((await fetch(`${server.url}/v1/store/orders/1`, { method: 'DELETE', headers })).status).toBe(204);
    expect(await metric(server.url, /^petstore_order_events_total\{type="order.cancelled"\} (\d+)$/m)).toBe(1);

    // Fifty requests wait for a change that never comes; the signal answers every one of them.
    const cursor = (await feed(`after=${woken.body.nextCursor}`)).body.nextCursor;
    const fifty = Array.from({ length: 50 }, () => feed(`after=${cursor}&wait=30`));
    await until(async () => (await metric(server.url, /^petstore_order_event_waits (\d+)$/m)) === 50, 'fifty requests wait');
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    const answers = await Promise.all(fifty);
    for (const answer of answers) expect(answer).toEqual({ status: 200, body: { events: [], nextCursor: cursor } });
    await expect(server.exited).resolves.toBe(0);
    const exitedAfter = Date.now() - signalled;
    expect(exitedAfter).toBeLessThan(SHUTDOWN_MS);
    expect(server.stderr()).not.toContain('shutdown timeout reached');
  } finally {
    server.child.kill('SIGKILL');
  }
}, 60_000);
