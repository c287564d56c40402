import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CheckedAddresses } from '../../src/webhooks/addresses';
import { attempt, delivered } from '../../src/webhooks/attempt';

// One attempt against real receivers on loopback: what it sends, what it makes of each answer,
// and that it connects only where it was told.
interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function receiver(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    received,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const LOOPBACK: CheckedAddresses = [{ address: '127.0.0.1', family: 4 }];
const body = '{"id":"evt_1","type":"order.created"}';
const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': '1795750000', 'webhook-signature': 'v1,abc' };

test('an attempt POSTs the body with its headers as JSON, to the checked address whatever the name, and a 2xx delivers it', async () => {
  const at = await receiver((_req, res) => res.writeHead(204).end());
  try {
    // The name is never looked up: the attempt connects to the address it was given.
    const result = await attempt({
      url: new URL(`http://receiver.invalid:${at.port}/hooks/petstore?x=1`),
      addresses: LOOPBACK,
      headers,
      body,
    });
    expect(result).toEqual({ status: 204, durationMs: expect.any(Number) });
    expect(delivered(result)).toBe(true);
    expect(at.received).toEqual([
      {
        method: 'POST',
        path: '/hooks/petstore?x=1',
        headers: expect.objectContaining({ ...headers, 'content-type': 'application/json', host: `receiver.invalid:${at.port}` }),
        body,
      },
    ]);
  } finally {
    await at.close();
  }
});

test('a redirect is a failure and is not followed; a 429 or 503 says its Retry-After; a 500 is a failure', async () => {
  const at = await receiver((req, res) => {
    if (req.url === '/moved') res.writeHead(302, { Location: '/elsewhere' }).end();
    else if (req.url === '/busy') res.writeHead(503, { 'Retry-After': '120' }).end();
    else if (req.url === '/limited') res.writeHead(429, { 'Retry-After': 'soon' }).end();
    else res.writeHead(500).end('broken');
  });
  try {
    const to = (path: string) => attempt({ url: new URL(`http://127.0.0.1:${at.port}${path}`), addresses: LOOPBACK, headers, body });
    const moved = await to('/moved');
    expect(moved.status).toBe(302);
    expect(delivered(moved)).toBe(false);
    expect(await to('/busy')).toEqual({ status: 503, retryAfterMs: 120_000, durationMs: expect.any(Number) });
    expect(await to('/limited')).toEqual({ status: 429, durationMs: expect.any(Number) });
    expect(delivered(await to('/fails'))).toBe(false);
    expect(at.received.map((each) => each.path)).toEqual(['/moved', '/busy', '/limited', '/fails']);
  } finally {
    await at.close();
  }
});

test('a receiver that does not answer in time is a timeout; one that is not there is its connection error', async () => {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const at = await receiver((_req, res) => void held.then(() => res.writeHead(200).end()));
  try {
    const result = await attempt({ url: new URL(`http://127.0.0.1:${at.port}/slow`), addresses: LOOPBACK, headers, body, timeoutMs: 300 });
    expect(result).toEqual({ error: 'no answer within 0.3 s', durationMs: expect.any(Number) });
    expect(result.durationMs).toBeGreaterThanOrEqual(299);
  } finally {
    release();
    await at.close();
  }
  const gone = await attempt({ url: new URL(`http://127.0.0.1:${at.port}/`), addresses: LOOPBACK, headers, body });
  expect(gone).toEqual({ error: 'ECONNREFUSED', durationMs: expect.any(Number) });
});
