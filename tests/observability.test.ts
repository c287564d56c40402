import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { Writable } from 'node:stream';
import request from 'supertest';
import { createApp } from '../src/app';
import { createLogger } from '../src/logger';
import { createMetrics, type Metrics } from '../src/metrics';
import { startServer } from '../src/server';
import type { Store } from '../src/store';
import { freshStorePerTest, order } from './helpers/stores';
import { tempDir } from './helpers/temp-dir';
import { until } from './helpers/wait';
import { ROOT } from './helpers/project';

const tmp = tempDir();
afterAll(tmp.cleanup);

let store: Store;
let key: string;
freshStorePerTest(tmp.dir, [order({ id: 1 })], (made) => ({ store, key } = made));

function sink(): { stream: Writable; lines: () => Array<Record<string, unknown>> } {
  let text = '';
  const stream = new Writable({ write: (chunk, _encoding, done) => ((text += chunk.toString()), done()) });
  return {
    stream,
    lines: () =>
      text
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/**
 * Waits until `count` requests have been recorded: the request log line is written right after the
 * request is counted, when its response closes, which can be after the client has read it.
 */
async function recorded(metrics: Metrics, count: number): Promise<void> {
  const counter = metrics.registry.getSingleMetric('petstore_http_requests_total')!;
  const total = async () => (await counter.get()).values.reduce((sum, { value }) => sum + value, 0);
  await until(async () => (await total()) >= count, `${count} requests are recorded`);
}

describe('request logs', () => {
  test('one JSON line per request: request id, operationId, status and duration, and never a header', async () => {
    const logs = sink();
    const metrics = createMetrics();
    const app = await createApp({ store, metrics, logger: createLogger('info', logs.stream) });

    const list = await request(app).get('/v1/store/orders').set('Authorization', `Bearer ${key}`).set('X-Request-Id', 'trace-42');
    await request(app).delete('/v1/store/orders/99').set('Authorization', `Bearer ${key}`);
    await request(app).get('/v1/nowhere');
    await request(app).get('/healthz');
    await recorded(metrics, 4);

    expect(list.headers['x-request-id']).toBe('trace-42');
    const requests = logs.lines().filter((line) => line.msg === 'request');
    expect(requests.map((line) => [line.method, line.path, line.operationId, line.status])).toEqual([
      ['GET', '/v1/store/orders', 'listOrders', 200],
      ['DELETE', '/v1/store/orders/99', 'cancelOrder', 404],
      ['GET', '/v1/nowhere', 'none', 404],
      ['GET', '/healthz', 'healthz', 200],
    ]);
    expect(requests[0]).toMatchObject({ requestId: 'trace-42', level: 30, service: 'petstore-orders' });
    for (const line of requests) expect(typeof line.durationMs).toBe('number');
    expect(JSON.stringify(logs.lines())).not.toContain(key);
  });

  test('LOG_LEVEL filters them: at warn, requests are not logged but failures are', async () => {
    const logs = sink();
    const metrics = createMetrics();
    const app = await createApp({
      metrics,
      store: new Proxy(store, {
        get: (target, name) => (name === 'cancelOrder' ? () => Promise.reject(new Error('boom')) : Reflect.get(target, name)),
      }),
      logger: createLogger('warn', logs.stream),
    });

    await request(app).get('/v1/store/orders').set('Authorization', `Bearer ${key}`);
    await request(app).delete('/v1/store/orders/1').set('Authorization', `Bearer ${key}`);
    await recorded(metrics, 2);

    expect(logs.lines().map((line) => line.msg)).toEqual(['request failed']);
    expect((logs.lines()[0]!.err as { stack: string }).stack).toContain('boom');
  });

  test('a fatal error escaping every handler is logged with its stack, and the process exits 1', () => {
    const script = `
      const { createLogger } = require(${JSON.stringify(path.join(ROOT, 'dist', 'src', 'logger.js'))});
      const { exitOnFatalErrors } = require(${JSON.stringify(path.join(ROOT, 'dist', 'src', 'server.js'))});
      exitOnFatalErrors(createLogger('info'));
      setTimeout(() => { throw new Error('escaped everything'); }, 1);
    `;
    const result = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10000 });

    expect(result.status).toBe(1);
    const fatal = JSON.parse(result.stderr.trim().split('\n').at(-1)!) as { level: number; msg: string; err: { stack: string } };
    expect(fatal).toMatchObject({ level: 60, msg: 'fatal error; exiting' });
    expect(fatal.err.stack).toMatch(/Error: escaped everything\n\s+at /);
  });
});

describe('GET /metrics', () => {
  test('counts requests and their durations by operationId, method and status, in Prometheus text', async () => {
    const metrics = createMetrics();
    const app = await createApp({ store, metrics });
    await request(app).get('/v1/store/orders').set('Authorization', `Bearer ${key}`);
    await request(app).get('/v1/store/orders').set('Authorization', `Bearer ${key}`);
    await request(app).get('/v1/store/orders');
    await recorded(metrics, 3);

    const res = await request(app).get('/metrics');

    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain('petstore_http_requests_total{api_version="v1",operation="listOrders",method="GET",status="200"} 2');
    expect(res.text).toContain('petstore_http_requests_total{api_version="v1",operation="listOrders",method="GET",status="401"} 1');
    expect(res.text).toMatch(
      /petstore_http_request_duration_seconds_bucket\{le="0\.5",api_version="v1",operation="listOrders",method="GET",status="200"\} 2/,
    );
    expect(res.text).toContain(
      'petstore_http_request_duration_seconds_count{api_version="v1",operation="listOrders",method="GET",status="200"} 2',
    );
  });

  test('with a token set, it needs that token, and the server adds the process metrics', async () => {
    const server = await startServer({
      store,
      logger: createLogger('silent'),
      host: '127.0.0.1',
      port: 0,
      shutdownTimeoutMs: 1000,
      metricsToken: 's3cret',
    });
    try {
      const get = (authorization?: string) =>
        fetch(`${server.url}/metrics`, { headers: authorization ? { Authorization: authorization } : {} });

      const [none, wrong, right] = await Promise.all([get(), get('Bearer nope'), get('Bearer s3cret')]);

      expect(none.status).toBe(401);
      expect(await none.json()).toEqual({ code: 'unauthorized', message: 'A valid metrics token is required', status: 401 });
      expect(wrong.status).toBe(401);
      expect(right.status).toBe(200);
      const text = await right.text();
      expect(text).toContain('process_cpu_seconds_total');
      expect(text).toContain('nodejs_eventloop_lag_seconds');
    } finally {
      await server.close();
    }
  });
});
