import { tracingChannel } from 'node:diagnostics_channel';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createLogger, requestLog, type RequestLine } from '../src/logger';

// The request log line is written without pino's serializer, which costs a small request a
// measurable share of its time (docs/performance.md). It must stay the line pino writes, byte for
// byte: a pino release that writes the same object differently fails here.

function capture(): { stream: Writable; written: string[] } {
  const written: string[] = [];
  const stream = new Writable({ write: (chunk: Buffer, _encoding, done) => (written.push(chunk.toString()), done()) });
  return { stream, written };
}

const line = (fields: Partial<RequestLine> = {}): RequestLine => ({
  requestId: '3f1c2b9e-4b7a-4a53-9d2e-1f0c8a7b6d5e',
  method: 'GET',
  path: '/v2/store/orders/500',
  apiVersion: 'v2',
  operationId: 'getOrderById',
  status: 200,
  durationMs: 0.371,
  aborted: undefined,
  ...fields,
});

const LINES: Array<[string, RequestLine]> = [
  ['an answered request', line()],
  ['one no version answered', line({ apiVersion: undefined, operationId: 'none', status: 404, path: '/nowhere' })],
  ['one its client left', line({ aborted: true, status: 200, durationMs: 12.5 })],
  ['a path with quotes, backslashes and control characters', line({ path: '/v2/store/orders/"a"\\b\u0001\t\u001f' })],
  ['a path of bytes past ASCII, as Node reads them', line({ path: '/v2/store/orders/\u00e9\u00ff\u0080' })],
  ['a path over a hundred characters', line({ path: `/v2/${'a"'.repeat(80)}` })],
  ['a long duration with many digits', line({ durationMs: 123456.789, status: 503 })],
  ['a duration that is not finite', line({ durationMs: Number.NaN })],
  ['a client-chosen request id', line({ requestId: 'trace-42:a.b_c' })],
];

afterEach(() => jest.useRealTimers());

test.each(LINES)('the line of %s is the one pino writes for the same fields', (_case, fields) => {
  jest.useFakeTimers({ now: Date.UTC(2026, 10, 28, 3, 0, 0, 123) });
  const ours = capture();
  const theirs = capture();
  const logger = createLogger('info', ours.stream);
  const info = jest.spyOn(logger, 'info');

  requestLog(logger)(fields);
  createLogger('info', theirs.stream).info(fields, 'request');

  expect(info).not.toHaveBeenCalled();
  expect(ours.written).toHaveLength(1);
  expect(ours.written).toEqual(theirs.written);
});

test('a logger whose level is above info writes no request line, and one lowered later does', () => {
  const out = capture();
  const logger = createLogger('warn', out.stream);
  const log = requestLog(logger);

  log(line());
  expect(out.written).toEqual([]);

  logger.level = 'info';
  log(line());
  expect(out.written).toHaveLength(1);
});

test('a logger createLogger did not make, such as a child with bindings of its own, has its lines written by pino', () => {
  const out = capture();
  const child = createLogger('info', out.stream).child({ worker: 2 });
  const plain = pino({ base: null }, out.stream);

  requestLog(child)(line());
  requestLog(plain)(line({ status: 201 }));

  const written = out.written.map((text) => JSON.parse(text) as Record<string, unknown>);
  expect(written).toEqual([
    expect.objectContaining({ service: 'petstore-orders', worker: 2, msg: 'request', status: 200 }),
    expect.objectContaining({ msg: 'request', status: 201 }),
  ]);
  expect(written[1]).not.toHaveProperty('service');
});

test("while something traces pino's serializer, the request line goes through it, so that the tracer sees every line", () => {
  const out = capture();
  const logger = createLogger('info', out.stream);
  const log = requestLog(logger);
  const traced: unknown[] = [];
  const none = (): void => undefined;
  const tracer = { start: (message: unknown) => void traced.push(message), end: none, asyncStart: none, asyncEnd: none, error: none };
  const channel = tracingChannel('pino_asJson');

  channel.subscribe(tracer);
  try {
    log(line());
  } finally {
    channel.unsubscribe(tracer);
  }
  log(line({ status: 304 }));

  expect(traced).toHaveLength(1);
  expect(out.written.map((text) => (JSON.parse(text) as { status: number }).status)).toEqual([200, 304]);
});
