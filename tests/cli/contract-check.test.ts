import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { runCli } from '../../src/cli/program';
import { loadDocument } from '../../src/contract/document';
import type { Store } from '../../src/store';
import { listen } from '../helpers/app';
import { addKey, freshStore, order, rowsOf } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';

// contract-check against a real deployment, and against one that breaks the contract on purpose.
const tmp = tempDir();
afterAll(tmp.cleanup);

async function contractCheck(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const status = await runCli(['contract-check', ...args], {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    stdin: () => Readable.from([]),
    env: {},
  });
  return { status, stdout, stderr };
}

describe('against a real server', () => {
  let store: Store;
  let file: string;
  let key: string;
  let server: Awaited<ReturnType<typeof listen>>;
  beforeEach(async () => {
    ({ store, file } = freshStore(tmp.dir));
    key = await addKey(store);
    await store.importOrders([order({ id: 1, petId: 7 }), order({ id: 2, status: 'shipped' }), order({ id: 3 })]);
    server = await listen({ store });
  });
  afterEach(async () => {
    await server.close();
    await store.close();
  });

  test('read-only by default: every check passes, one line each, and nothing changes', async () => {
    const before = rowsOf(file);

    const result = await contractCheck(['--base-url', server.url, '--api-key', key]);

    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines.filter((line) => line.startsWith('PASS  '))).toHaveLength(9);
    expect(result.stdout).not.toContain('FAIL');
    expect(result.stdout).toContain('getPetById is deprecated');
    expect(result.stdout).toMatch(/9 checks against .*: 9 passed, 0 failed/);
    expect(rowsOf(file)).toEqual(before);
  });

  test('--allow-writes cancels the named order and checks the 409 of the shipped one; --json reports it', async () => {
    const result = await contractCheck([
      '--base-url',
      `${server.url}/v1/`,
      '--api-key',
      key,
      '--allow-writes',
      '--cancel-order',
      '1',
      '--shipped-order',
      '2',
      '--json',
    ]);

    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout) as { passed: boolean; checks: Array<{ name: string; ok: boolean }> };
    expect(report.passed).toBe(true);
    expect(report.checks.map((c) => c.name)).toEqual(
      expect.arrayContaining(['cancelOrder 1: 204, then 404 when cancelled again', 'cancelOrder 2 (shipped): 409 Error']),
    );
    expect(rowsOf(file).map((row) => row.status)).toEqual(['cancelled', 'shipped', 'pending']);
  });

  test('a wrong key makes the list checks fail, and the exit status 1', async () => {
    const result = await contractCheck(['--base-url', server.url, '--api-key', 'pso_nope']);

    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/FAIL {2}listOrders: 200, every order valid, with an ETag\n {6}expected 200, got 401/);
  });

  test('--api-version v2 checks v2: its document, pages, cursors, one order, the change feed and refusals, read-only', async () => {
    const before = rowsOf(file);

    const result = await contractCheck(['--base-url', `${server.url}/v2`, '--api-key', key, '--api-version', 'v2']);

    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout.split('\n').filter((line) => line.startsWith('PASS  '))).toEqual([
      'PASS  GET /v2/openapi.json serves the local spec, unchanged',
      'PASS  listOrders: 200, a page of valid orders, with a Link to the next page when there is one',
      "PASS  listOrders with the page's nextCursor: 200, the next orders by id",
      'PASS  listOrders with an altered cursor: 400 Error',
      'PASS  listOrders with limit=0: 400 Error',
      'PASS  listOrders with an undeclared query parameter: 400 Error',
      'PASS  listOrders without a key: 401 Error with a Bearer challenge',
      'PASS  listOrders with a wrong key: 401 Error with a Bearer challenge',
      'PASS  cancelOrder of an unknown order: 404 Error',
      'PASS  getOrderById 1: 200, the order, with an ETag that answers 304 in If-None-Match',
      'PASS  getOrderById of an unknown order: 404 Error',
      'PASS  getOrderById with a malformed id: 400 Error',
      'PASS  listOrderEvents from=latest: 200, an empty page whose cursor reads on',
      'PASS  listOrderEvents from the oldest: 200, a page whose cursor reads on',
      'PASS  listOrderEvents with an altered cursor, or a wait past 30 s: 400 Error',
      'PASS  cancelOrder with a malformed id: 400 Error',
      'PASS  an unknown path: 404 Error',
    ]);
    expect(rowsOf(file)).toEqual(before);
  });

  test('--api-version v2 --allow-writes cancels through v2, and finds the cancel in the change feed', async () => {
    const result = await contractCheck([
      '--base-url',
      server.url,
      '--api-key',
      key,
      '--api-version',
      'v2',
      '--allow-writes',
      '--cancel-order',
      '3',
      '--shipped-order',
      '2',
    ]);

    expect(result.status).toBe(0);
    expect(result.stdout).toContain('PASS  cancelOrder 3: 204, then 404 when cancelled again');
    expect(result.stdout).toContain('PASS  listOrderEvents after the cancel of 3: its order.cancelled event, within 10 s');
    expect(rowsOf(file).map((row) => row.status)).toEqual(['pending', 'shipped', 'cancelled']);
  });

  test('--api-version v3 checks v3 as v2, under /v3; --allow-writes cancels, and places, replays and ships an order of its own', async () => {
    const result = await contractCheck([
      '--base-url',
      `${server.url}/v3`,
      '--api-key',
      key,
      '--api-version',
      'v3',
      '--allow-writes',
      '--cancel-order',
      '3',
      '--shipped-order',
      '2',
    ]);

    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const passed = result.stdout.split('\n').filter((line) => line.startsWith('PASS  '));
    expect(passed).toHaveLength(33);
    expect(passed).toContain('PASS  GET /v3/openapi.json serves the local spec, unchanged');
    // The webhook endpoint operations (3.2), none of which makes an endpoint.
    expect(passed).toContain('PASS  listWebhookEndpoints: 200, a page of endpoints, none with its secret');
    expect(passed).toContain('PASS  createWebhookEndpoint at an ftp: URL: 400 Error');
    expect(passed).toContain('PASS  replayWebhookEvents of an unknown endpoint: 404 Error');
    expect(await store.webhooks.listEndpoints('', 10)).toEqual([]);
    expect(passed).toContain('PASS  listOrderEvents after the cancel of 3: its order.cancelled event, within 10 s');
    expect(passed).toContain(
      'PASS  placeOrder: 201, a pending order at its Location; the same request again: the same answer, byte for byte',
    );
    expect(passed).toContain('PASS  placeOrder with the same Idempotency-Key and another body: 422 Error');
    expect(passed).toContain('PASS  shipOrder 4 (the placed order): 200, shipped; again: 409 Error');
    // The one order it placed, shipped; the cancel of 3.
    expect(rowsOf(file).map((row) => row.status)).toEqual(['pending', 'shipped', 'cancelled', 'shipped']);
  });

  test('a key without every scope the version declares fails the checks it cannot pass, each saying which scope it lacks', async () => {
    const reader = await addKey(store, 'reader', ['orders:read']);

    const result = await contractCheck(['--base-url', server.url, '--api-key', reader, '--api-version', 'v3']);

    expect(result.status).toBe(1);
    const failed = result.stdout.split('\n').filter((line) => line.startsWith('      '));
    expect(failed.length).toBeGreaterThan(0);
    for (const line of failed) {
      expect(line).toMatch(/the key lacks the scope (orders:|webhooks:manage)/);
      expect(line).toContain(
        'contract-check needs a key with every scope v3 declares: orders:read,orders:place,orders:cancel,orders:ship,webhooks:manage',
      );
    }
  });

  test('an unknown --api-version is refused, naming the flag', async () => {
    const result = await contractCheck(['--base-url', server.url, '--api-key', key, '--api-version', 'v9']);

    expect(result.status).toBe(1);
    expect(result.stderr).toContain('--api-version must be one of v1, v2, v3, got "v9"');
  });

  test.each([
    [['--cancel-order', '1'], '--cancel-order changes the deployment; add --allow-writes to allow it'],
    [['--allow-writes'], '--allow-writes needs --cancel-order ID and/or --shipped-order ID'],
    [['--allow-writes', '--cancel-order', '1.5'], '--cancel-order must be the plain decimal form'],
  ])('%j is refused before anything is called, naming the flag', async (extra, message) => {
    const result = await contractCheck(['--base-url', server.url, '--api-key', key, ...extra]);

    expect(result.status).toBe(1);
    expect(result.stderr).toContain(message);
    expect(rowsOf(file)[0]!.status).toBe('pending');
  });
});

test('a deployment that breaks the contract fails the checks that see it', async () => {
  // A deployment serving a document that is not the local one.
  const document = JSON.parse(JSON.stringify(loadDocument())) as { info: { title: string } };
  document.info.title = 'Another API';
  const broken = http.createServer((req, res) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    if (req.url === '/v1/openapi.json') return send(200, document);
    if (req.url === '/v1/store/orders') {
      if (req.headers.authorization !== 'Bearer pso_good') return send(401, { code: 'unauthorized', message: 'no', status: 401 });
      return send(200, [{ id: '1', petId: 7, quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false }], { ETag: 'W/"x"' });
    }
    if (req.url?.startsWith('/v1/store/orders/')) return send(404, { code: 'not_found_at_all', message: 'gone', status: 404 });
    if (req.url?.startsWith('/v1/pets/')) return send(200, { id: 7 });
    return send(404, { code: 'not_found', message: 'nothing here', status: 404 });
  });
  await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(broken.address() as AddressInfo).port}`;

  const result = await contractCheck(['--base-url', url, '--api-key', 'pso_good']);
  broken.close();

  expect(result.status).toBe(1);
  const failed = result.stdout.split('\n').filter((line) => line.startsWith('FAIL'));
  expect(failed).toEqual([
    'FAIL  GET /v1/openapi.json serves the local spec, unchanged',
    'FAIL  listOrders: 200, every order valid, with an ETag',
    'FAIL  listOrders with its own ETag in If-None-Match: 304, no body',
    'FAIL  listOrders without a key: 401 Error with a Bearer challenge',
    'FAIL  listOrders with a wrong key: 401 Error with a Bearer challenge',
    'FAIL  cancelOrder of an unknown order: 404 Error',
    'FAIL  cancelOrder with a malformed id: 400 Error',
    'FAIL  getPetById is deprecated: Deprecation, Sunset and Link headers as the spec says',
  ]);
  expect(result.stdout).toContain('body invalid');
  expect(result.stdout).toMatch(/1 passed, 8 failed/);
});
