import net from 'node:net';
import { Writable } from 'node:stream';
import type { HttpLimits } from '../../src/config';
import { createLogger } from '../../src/logger';
import { startServer, type RunningServer } from '../../src/server';
import type { Store } from '../../src/store';
import { addKey, freshStore, order } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';
import { until } from '../helpers/wait';

// Slow and oversized clients, over raw sockets so the test controls every byte and every pause.
const tmp = tempDir();
afterAll(tmp.cleanup);

const LIMITS: HttpLimits = {
  headersTimeoutMs: 400,
  requestTimeoutMs: 800,
  keepAliveTimeoutMs: 300,
  socketIdleTimeoutMs: 700,
  maxHeaderBytes: 2048,
  maxBodyBytes: 64,
};

let store: Store;
let server: RunningServer;
let key: string;
let port: number;
let logged = '';
beforeAll(async () => {
  ({ store } = freshStore(tmp.dir));
  key = await addKey(store);
  await store.importOrders([order({ id: 1 }), order({ id: 2 })]);
  const sink = new Writable({ write: (chunk, _encoding, done) => ((logged += chunk.toString()), done()) });
  server = await startServer({
    store,
    logger: createLogger('info', sink),
    host: '127.0.0.1',
    port: 0,
    shutdownTimeoutMs: 1000,
    limits: LIMITS,
  });
  port = Number(new URL(server.url).port);
});
afterAll(() => server.close());

interface Exchange {
  /** Everything the server sent before it closed the connection (or the wait ran out). */
  text: string;
  closed: boolean;
  elapsedMs: number;
}

/** Writes `parts` with `pauseMs` between them, then collects what comes back until close or `waitMs`. */
function exchange(parts: Array<string | Buffer>, options: { pauseMs?: number; waitMs?: number } = {}): Promise<Exchange> {
  const { pauseMs = 0, waitMs = 3000 } = options;
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let settled = false;
    const finish = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed, elapsedMs: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('close', () => finish(true));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.code === 'EPIPE' ? finish(true) : reject(err)));
    const sendParts = async (): Promise<void> => {
      for (const [i, part] of parts.entries()) {
        if (i > 0 && pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
        if (socket.destroyed) return;
        socket.write(part);
      }
    };
    socket.on('connect', () => void sendParts());
  });
}

function statusOf(text: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
}

function bodyOf(text: string): unknown {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
}

function expectErrorReply(result: Exchange, status: number): void {
  expect(statusOf(result.text)).toBe(status);
  expect(result.text).toMatch(/\r\nContent-Type: application\/json\r\n/i);
  expect(result.text).toMatch(/\r\nX-Content-Type-Options: nosniff\r\n/i);
  expect(bodyOf(result.text)).toEqual({ code: 'invalid_request', message: expect.any(String), status });
  expect(result.closed).toBe(true);
}

test('a client that sends its headers too slowly (slowloris) gets 408 and is disconnected', async () => {
  const drip = ['GET /v1/store/orders HTTP/1.1\r\n', 'Host: x\r\n', ...Array.from({ length: 30 }, (_, i) => `X-Drip-${i}: 1\r\n`)];

  const result = await exchange(drip, { pauseMs: 100 });

  expectErrorReply(result, 408);
  expect(result.elapsedMs).toBeLessThan(2500);
});

test('a client that never finishes its body gets 408 and is disconnected', async () => {
  const head = `DELETE /v1/store/orders/2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Length: 40\r\n\r\n`;

  const result = await exchange([head, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n'], { pauseMs: 150 });

  expectErrorReply(result, 408);
  expect(await store.cancelOrder(2)).toBe('cancelled'); // the unfinished request changed nothing
});

test('headers over the size limit get 431 and the connection closes', async () => {
  const result = await exchange([`GET /v1/store/orders HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(4096)}\r\n\r\n`]);

  expectErrorReply(result, 431);
});

test('a body announced over the limit gets 413 before it is sent, and nothing changes', async () => {
  const head = `DELETE /v1/store/orders/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Length: 100000\r\n\r\n`;

  const result = await exchange([head]);

  expectErrorReply(result, 413);
  expect(result.text).toMatch(/\r\nConnection: close\r\n/i);
  expect(await store.cancelOrder(1)).toBe('cancelled'); // it was still pending
});

test('a chunked body that grows past the limit gets 413', async () => {
  const head = `DELETE /v1/store/orders/3 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nTransfer-Encoding: chunked\r\n\r\n`;
  const chunk = `40\r\n${'x'.repeat(64)}\r\n`;

  const result = await exchange([head, chunk, chunk, chunk], { pauseMs: 20 });

  expectErrorReply(result, 413);
});

test('a small body on a DELETE is read and ignored', async () => {
  await store.importOrders([order({ id: 4 })]);
  const request = `DELETE /v1/store/orders/4 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`;

  const result = await exchange([request]);

  expect(statusOf(result.text)).toBe(204);
});

test('bytes that are not HTTP get 400 and the connection closes', async () => {
  const result = await exchange(['GET /v1/store/orders HTTP/1.1\r\nHo st: x\r\n\r\n']);

  expectErrorReply(result, 400);
});

test('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
  const result = await exchange([`GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`], { waitMs: 3000 });

  expect(statusOf(result.text)).toBe(200);
  expect(result.closed).toBe(true);
  expect(result.elapsedMs).toBeLessThan(2000);
});

test('a client that stops reading a long list is cut after the idle timeout, and the list is released', async () => {
  // Long enough that the response cannot all sit in the kernel's socket buffers.
  await store.importOrders(Array.from({ length: 250_000 }, (_, i) => order({ id: 1000 + i })));
  logged = '';
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.once('data', () => socket.pause()); // reads one chunk, then never again
  socket.write(`GET /v1/store/orders HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\nAuthorization: Bearer ${key}\r\n\r\n`);
  const started = Date.now();

  await until(() => logged.includes('closing a connection with no traffic'), 'the idle connection is closed', 8000);
  socket.destroy();

  expect(logged).toContain('closing a connection with no traffic');
  expect(Date.now() - started).toBeLessThan(LIMITS.socketIdleTimeoutMs + 4000);
  // The server is unharmed, and the next list is whole.
  const res = await fetch(`${server.url}/v1/store/orders`, { headers: { Authorization: `Bearer ${key}` } });
  expect(((await res.json()) as unknown[]).length).toBeGreaterThanOrEqual(250_000);
}, 60_000);
