import net from 'node:net';
import path from 'node:path';
import { serve, seedWithCli } from '../helpers/cli';
import { tempDir } from '../helpers/temp-dir';
import { until } from '../helpers/wait';
import { dechunk } from '../helpers/chunked';

// SIGTERM under load: what was received completes, nothing new is accepted, idle keep-alive
// connections close at once, a stalled client is cut at the drain timeout, and the exit is 0.
const tmp = tempDir();
afterAll(tmp.cleanup);

const ORDERS = 20_000;
const DRAIN_MS = 1500;

/** A raw keep-alive connection that sends one request and reads the reply only when told to. */
function rawRequest(url: string, request: string) {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  let received = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
  socket.on('error', () => undefined);
  const sent = new Promise<void>((resolve) => socket.on('connect', () => socket.write(request, () => resolve())));
  return { socket, sent, closed, received: () => received };
}

test('SIGTERM drains: in-flight requests complete, new connections are refused, exit 0 in bounded time', async () => {
  const db = path.join(tmp.dir, 'drain.db');
  const key = seedWithCli(db, 'drain', ORDERS);
  const server = await serve(db, [], { PETSTORE_SHUTDOWN_TIMEOUT_MS: String(DRAIN_MS) });
  const auth = `Authorization: Bearer ${key}\r\n`;
  const list = `GET /v1/store/orders HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n${auth}\r\n`;

  // A keep-alive connection that has finished its request and sits idle.
  const idle = rawRequest(server.url, `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`);
  // Lists of 20,000 orders whose clients read only after the signal: in flight when it comes.
  const slow = Array.from({ length: 4 }, () => rawRequest(server.url, list));
  // A client that never reads its lists: it must not hold the shutdown past the drain timeout. It
  // pipelines 24 of them (about 40 MB), more than loopback's socket buffers can absorb, so that
  // one is always still being written when the signal comes.
  const stalled = rawRequest(server.url, list.repeat(24));
  for (const conn of [idle, ...slow, stalled]) conn.socket.pause();
  await Promise.all([idle, ...slow, stalled].map((conn) => conn.sent));
  idle.socket.resume();

  // Steady load from fetch clients until the signal; every answer must be a whole, valid one.
  let stop = false;
  let answered = 0;
  const load = Promise.all(
    Array.from({ length: 6 }, async (_, n) => {
      for (let i = 0; !stop; i += 1) {
        const id = n * 1000 + i + 1;
        const res = await fetch(`${server.url}/v1/store/orders/${id}`, {
          method: 'DELETE',
          headers: { Authorization: `Bearer ${key}` },
        }).catch(() => null);
        if (res === null) return;
        expect([204, 404, 503]).toContain(res.status);
        if (res.status !== 204) await res.json();
        answered += 1;
      }
    }),
  );
  await until(() => answered >= 20, 'the load is under way');
  const signalled = Date.now();
  server.child.kill('SIGTERM');
  stop = true;
  await load;

  // New connections are refused once the server has stopped listening, which it does as it logs this.
  await server.printed('"msg":"shutting down"');
  const refused = await new Promise<string>((resolve) => {
    const probe = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    probe.on('connect', () => (probe.destroy(), resolve('connected')));
    probe.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
  expect(refused).toBe('ECONNREFUSED');

  // The idle keep-alive connection was closed at once, not after its keep-alive timeout.
  expect((await idle.closed) - signalled).toBeLessThan(1000);

  // The slow readers now read: each gets its whole list, and then the connection closes.
  for (const conn of slow) conn.socket.resume();
  await Promise.all(slow.map((conn) => conn.closed));
  for (const conn of slow) {
    const text = conn.received().toString('utf8');
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    const body = text.slice(text.indexOf('\r\n\r\n') + 4);
    const chunks = /transfer-encoding: chunked/i.test(text) ? dechunk(body) : body;
    expect((JSON.parse(chunks) as unknown[]).length).toBeGreaterThan(ORDERS - 6 * 200);
  }

  // The stalled client was cut at the drain timeout, and the process exited 0 soon after.
  await expect(server.exited).resolves.toBe(0);
  const exitedAfter = Date.now() - signalled;
  expect(exitedAfter).toBeLessThan(DRAIN_MS + 2000);
  expect(stalled.received().length).toBeLessThan(30 * ORDERS);
  expect(server.stderr()).toContain('shutdown timeout reached');
  expect(answered).toBeGreaterThan(10);
  process.stdout.write(
    `drain: ${answered} requests answered under load, ${slow.length} lists in flight at SIGTERM completed, exit 0 after ${exitedAfter} ms\n`,
  );
}, 30_000);
