import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import { cli, serve, type Served } from '../helpers/cli';
import { tempDir } from '../helpers/temp-dir';
import { until } from '../helpers/wait';
import { verifyWebhook } from '../../src/client';
import { DELIVERY_THREAD_NAME } from '../../src/webhooks/delivery-thread';

// A served instance delivers from a worker thread with its own connection to the store. What the
// thread does must still reach the operator through the server: its deliveries, its metrics, its log
// lines; and a shutdown must end it cleanly, giving its endpoints up.
const tmp = tempDir();
afterAll(tmp.cleanup);

/** The thread's nice value here: one the server is given, so that the test sees it reach the thread (10 as shipped). */
const NICE = 15;
const ENV = { PETSTORE_WEBHOOK_ALLOW_HTTP: 'true', PETSTORE_WEBHOOK_ALLOW_PRIVATE: 'true', PETSTORE_WEBHOOK_NICE: String(NICE) };
/**
 * How long a wait on the delivery thread may take: it runs at a lower priority, so on a machine
 * the suite keeps busy it may wait seconds for a core (its metrics report above all, on a timer).
 */
const THREAD_WAIT_MS = 60_000;
const ORDER = JSON.stringify({ petId: 7, quantity: 1, shipDate: '2026-12-24T10:00:00Z' });

test('a served instance delivers from its thread: signed deliveries, their metrics and log lines through the server, and its endpoints given up on SIGTERM', async () => {
  const db = path.join(tmp.dir, 'thread.db');
  // Two endpoints on one receiver: /kept takes every delivery; /gone takes the first and answers
  // 410 to the next, which disables it.
  const received: Record<'kept' | 'gone', Array<{ headers: http.IncomingHttpHeaders; body: string }>> = { kept: [], gone: [] };
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const got = req.url === '/gone' ? received.gone : received.kept;
      got.push({ headers: req.headers, body });
      res.writeHead(got === received.gone && got.length > 1 ? 410 : 204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  let served: Served | undefined;
  try {
    const key = cli(['--db', db, 'keys', 'create', '--name', 'clerk', '--scopes', 'orders:read,orders:place'], { env: ENV }).stdout.trim();
    const add = (at: string) => {
      const added = cli(['--db', db, 'webhooks', 'add', `http://127.0.0.1:${(receiver.address() as AddressInfo).port}${at}`], { env: ENV });
      const [, id, secret] = /^id: (we_\w+)\nsecret: (whsec_\S+)\n$/.exec(added.stdout) ?? [];
      if (id === undefined || secret === undefined) throw new Error(`webhooks add printed ${added.stdout}${added.stderr}`);
      return { id, secret };
    };
    const server = await serve(db, [], ENV);
    served = server;
    const place = async (n: number) => {
      const res = await fetch(`${server.url}/v3/store/orders`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': `thread-${n}` },
        body: ORDER,
      });
      expect(res.status).toBe(201);
    };

    // Delivery runs in a worker thread of the served process, which says so when it starts: once
    // the store has an enabled endpoint, so that a store without one costs none.
    const started = 'webhook delivery started in its own thread';
    await place(0);
    expect(server.stderr()).not.toContain(started);

    // Endpoints made while the server runs, by another process: found, and the thread started. An
    // order placed before it had started reaches them too.
    const kept = add('/kept');
    const gone = add('/gone');
    await place(1);
    await server.printed(started, 'stderr');
    // An operator sees the thread by its name (Node.js 24 names the OS thread; 22 does not).
    const named = Number(process.versions.node.split('.')[0]) >= 24;
    const threads = process.platform === 'linux' ? threadsOf(server.child.pid) : [];
    if (process.platform === 'linux' && named) expect(threads.map(({ name }) => name)).toContain(DELIVERY_THREAD_NAME);
    // The thread runs behind the API: its nice value is lowered to PETSTORE_WEBHOOK_NICE, and no
    // other thread's is (Linux keeps one per thread). The server's own may be anything it was started with.
    const main = threads.find(({ tid }) => tid === server.child.pid);
    if (main !== undefined && main.nice < NICE) {
      const lowered = threads.filter(({ nice }) => nice !== main.nice);
      expect(lowered.map(({ nice }) => nice)).toEqual([NICE]);
      if (named) expect(lowered[0]?.name).toBe(DELIVERY_THREAD_NAME);
    }
    await until(() => received.kept.length === 1 && received.gone.length === 1, 'the first deliveries', THREAD_WAIT_MS);
    for (const { headers, body } of received.kept)
      expect(verifyWebhook(kept.secret, headers, body)).toMatchObject({ type: 'order.created' });
    // The thread's metrics, in the server's registry.
    const metrics = async () => (await fetch(`${server.url}/metrics`)).text();
    await until(
      async () => (await metrics()).includes('petstore_webhook_deliveries_total{outcome="delivered"} 2'),
      'the deliveries counted',
      THREAD_WAIT_MS,
    );

    await place(2);
    // The thread's log line, in the server's log; and its gauge.
    await server.printed('webhook endpoint disabled', 'stderr');
    await until(
      async () => (await metrics()).includes('petstore_webhook_endpoints_disabled 1'),
      'the disabled endpoint counted',
      THREAD_WAIT_MS,
    );
    await until(() => received.kept.length === 2, 'the second delivery to the endpoint kept', THREAD_WAIT_MS);

    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    served = undefined;
    const raw = new Database(db, { readonly: true });
    try {
      const state = raw.prepare<[string], { status: string; owner: string | null }>(
        'SELECT status, lease_owner AS owner FROM webhook_endpoints WHERE id = ?',
      );
      // Given up on the way out: another instance takes the endpoint at once, not when a lease runs out.
      expect(state.get(kept.id)).toEqual({ status: 'enabled', owner: null });
      expect(state.get(gone.id)).toEqual({ status: 'disabled', owner: null });
    } finally {
      raw.close();
    }
  } finally {
    served?.child.kill('SIGKILL');
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}, 240_000);

/**
 * Each thread of a process as the OS shows it: its id, its name (`/proc/<pid>/task/<tid>/comm`) and
 * its nice value (the 19th field of `/proc/<pid>/task/<tid>/stat`).
 */
function threadsOf(pid: number | undefined): Array<{ tid: number; name: string; nice: number }> {
  if (pid === undefined) throw new Error('the server has no process');
  return fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // The name, in parentheses, may hold spaces: the fields are counted from after its ')', the 3rd.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { tid: Number(tid), name: fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim(), nice: Number(fields[19 - 3]) };
  });
}
