import request from 'supertest';
import { createApp } from '../../src/app';
import { expectConforms } from '../helpers/contract';
import { ApiError } from '../../src/errors';
import { fixedErrorReply as fixedReply } from '../../src/http/error-reply';
import { createLogger } from '../../src/logger';
import { eachStore, order } from '../helpers/stores';

/** The lines an app logs at level error, parsed. */
function errorLog(): { logger: ReturnType<typeof createLogger>; entries: () => Array<Record<string, unknown>> } {
  const lines: string[] = [];
  const logger = createLogger('error', { write: (line: string) => lines.push(line) });
  return {
    logger,
    entries: () =>
      lines
        .join('')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/**
 * The generic 500 sent in place of a reply the contract refused: the Error body, conformant to what
 * the operation declares, and the violation logged with the request's id, the operation and the
 * status the handler tried to send.
 */
async function expectRefused(
  res: request.Response,
  log: ReturnType<typeof errorLog>,
  operationId: string,
  refusedStatus: number,
): Promise<void> {
  expect(res.status).toBe(500);
  expect(res.body).toEqual({ code: 'internal_error', message: 'Internal server error', status: 500 });
  await expectConforms(res, operationId);
  expect(log.entries()).toContainEqual(
    expect.objectContaining({
      msg: 'response violates the contract; sending 500 instead',
      requestId: res.headers['x-request-id'],
      operationId,
      status: refusedStatus,
      problem: expect.any(String),
    }),
  );
}

eachStore((s) => {
  beforeEach(() => s.store.importOrders([order({ id: 1 })]));

  test.each([
    ['a path outside /v1', 'get', '/store/orders'],
    ['an unknown path under /v1', 'get', '/v1/store/nothing'],
    ['the bare /v1', 'get', '/v1'],
    ['a deeper path than any operation', 'delete', '/v1/store/orders/1/items'],
    ['a path that only starts like /v1', 'get', '/v1x/store/orders'],
  ] as const)('%s gets a 404 Error', async (_case, method, path) => {
    const res = await request(await createApp({ store: s.store }))
      [method](path)
      .set(s.auth);

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'not_found', message: 'No operation exists at this path', status: 404 });
    await expectConforms(res);
  });

  test.each([
    ['POST', '/v1/store/orders', 'GET, HEAD'],
    ['PUT', '/v1/store/orders', 'GET, HEAD'],
    ['PATCH', '/v1/store/orders/1', 'DELETE'],
    ['GET', '/v1/store/orders/1', 'DELETE'],
    ['DELETE', '/v1/pets/1', 'GET, HEAD'],
    ['OPTIONS', '/v1/store/orders', 'GET, HEAD'],
  ])('%s %s gets a 405 Error with Allow: %s', async (method, path, allow) => {
    const res = await request(await createApp({ store: s.store }))
      [method.toLowerCase() as 'post'](path)
      .set(s.auth);

    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.body.code).toBe('method_not_allowed');
    await expectConforms(res);
  });

  test.each([
    ['a truncated escape', '/v1/store/orders/%'],
    ['an escape with a non-hex digit', '/v1/store/orders/%zz'],
    ['an invalid UTF-8 sequence', '/v1/store/orders/%E0%A4%A'],
    ['a broken escape outside /v1', '/%C0'],
  ])('a path with %s gets a 400 Error, not a crash', async (_case, path) => {
    const res = await request(await createApp({ store: s.store }))
      .delete(path)
      .set(s.auth);

    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
    await expectConforms(res);
  });

  test('no response names the framework', async () => {
    const app = await createApp({ store: s.store });

    for (const res of [
      await request(app).get('/v1/store/orders').set(s.auth),
      await request(app).get('/nowhere'),
      await request(app).get('/v1/store/orders'),
    ]) {
      expect(res.headers['x-powered-by']).toBeUndefined();
      expect(res.text).not.toMatch(/express|openapi-backend|at .*\.(js|ts):\d+/i);
    }
  });

  describe('a reply that breaks the contract', () => {
    test.each([
      ['a field of the wrong type', [{ id: '1', petId: 1, quantity: 1, shipDate: '2026-01-01T00:00:00Z', complete: false }]],
      ['an extra field', [{ id: 1, petId: 1, quantity: 1, shipDate: '2026-01-01T00:00:00Z', complete: false, status: 'pending' }]],
      ['a missing field', [{ id: 1, petId: 1, quantity: 1, complete: false }]],
      ['a date that is not a date-time', [{ id: 1, petId: 1, quantity: 1, shipDate: '2026-01-01', complete: false }]],
      ['an id beyond the safe range', [{ id: 2 ** 60, petId: 1, quantity: 1, shipDate: '2026-01-01T00:00:00Z', complete: false }]],
    ])('with %s is never sent: the client gets a logged 500', async (_case, body) => {
      const log = errorLog();
      const app = await createApp({
        store: s.store,
        logger: log.logger,
        handlers: { listOrders: async () => ({ status: 200, body: body as never, headers: { ETag: 'W/"1-1"' } }) },
      });

      const res = await request(app).get('/v1/store/orders').set(s.auth);

      await expectRefused(res, log, 'listOrders', 200);
    });

    // The dispatcher checks a fixed reply (a 401, a miss's 404, a 405) once per operation and
    // trusts it after: that is safe only because such a reply can never change, and only for the
    // operation it passed for.
    test('a fixed reply cannot be changed once made', () => {
      const reply = fixedReply(new ApiError('not_found'));

      for (const part of [reply, reply.headers, reply.body, reply.error]) expect(Object.isFrozen(part)).toBe(true);
      expect(() => {
        (reply.body as { message: string }).message = 'changed';
      }).toThrow(TypeError);
      expect(() => {
        reply.headers!['Allow'] = 'GET';
      }).toThrow(TypeError);
      expect(() => {
        reply.status = 200;
      }).toThrow(TypeError);
    });

    test('a fixed reply that passed for one operation is still refused, every time, by one that does not declare it', async () => {
      const notFound = fixedReply(new ApiError('not_found'));
      const log = errorLog();
      const app = await createApp({
        store: s.store,
        logger: log.logger,
        handlers: { cancelOrder: async () => notFound as never, listOrders: async () => notFound as never },
      });

      for (let round = 0; round < 2; round += 1) {
        const cancel = await request(app).delete('/v1/store/orders/1').set(s.auth);
        expect(cancel.status).toBe(404);
        expect(cancel.body).toEqual({ code: 'not_found', message: 'No operation exists at this path', status: 404 });
        await expectConforms(cancel, 'cancelOrder');
        // listOrders declares no 404.
        const list = await request(app).get('/v1/store/orders').set(s.auth);
        await expectRefused(list, log, 'listOrders', 404);
      }
    });

    test('a status the operation does not declare is never sent', async () => {
      const log = errorLog();
      const app = await createApp({
        store: s.store,
        logger: log.logger,
        handlers: { cancelOrder: async () => ({ status: 200 }) as never },
      });

      const res = await request(app).delete('/v1/store/orders/1').set(s.auth);

      await expectRefused(res, log, 'cancelOrder', 200);
      expect(await s.rows()).toContainEqual(expect.objectContaining({ id: 1, status: 'pending' }));
    });

    test('a body on a 204 is never sent', async () => {
      const log = errorLog();
      const app = await createApp({
        store: s.store,
        logger: log.logger,
        handlers: { cancelOrder: async () => ({ status: 204, body: { ok: true } }) as never },
      });

      const res = await request(app).delete('/v1/store/orders/1').set(s.auth);

      await expectRefused(res, log, 'cancelOrder', 204);
      expect(res.text).not.toContain('"ok"');
    });
  });

  test('a handler that throws gets a generic 500 with no internal message, and the failure is logged', async () => {
    const log = errorLog();
    const app = await createApp({
      store: s.store,
      logger: log.logger,
      handlers: {
        listOrders: async () => {
          throw new Error('SELECT * FROM secret_table failed');
        },
      },
    });

    const res = await request(app).get('/v1/store/orders').set(s.auth);

    expect(res.status).toBe(500);
    expect(res.body).toEqual({ code: 'internal_error', message: 'Internal server error', status: 500 });
    await expectConforms(res, 'listOrders');
    expect(log.entries()).toContainEqual(
      expect.objectContaining({
        msg: 'request failed',
        requestId: res.headers['x-request-id'],
        operationId: 'listOrders',
        err: expect.objectContaining({ message: 'SELECT * FROM secret_table failed' }),
      }),
    );
  });

  // A handler may answer at once, without a promise, when it has its reply in hand (a SQLite
  // store's answer for an order that is not pending): what it returns or throws is treated exactly
  // as what an async handler resolves or rejects with.
  describe('a handler that answers at once', () => {
    test('has its reply checked and sent', async () => {
      const log = errorLog();
      const good = await createApp({ store: s.store, handlers: { cancelOrder: () => ({ status: 204 }) } });
      const bad = await createApp({ store: s.store, logger: log.logger, handlers: { cancelOrder: () => ({ status: 200 }) as never } });

      expect((await request(good).delete('/v1/store/orders/1').set(s.auth)).status).toBe(204);
      const refused = await request(bad).delete('/v1/store/orders/1').set(s.auth);
      await expectRefused(refused, log, 'cancelOrder', 200);
    });

    test('has what it throws become the Error reply: an ApiError as it is, anything else a 500 that tells nothing', async () => {
      const app = await createApp({
        store: s.store,
        handlers: {
          cancelOrder: ({ path }) => {
            if (path.orderId === 7) throw new ApiError('order_not_found', 'Order 7 was not found');
            throw new Error('SELECT * FROM secret_table failed');
          },
        },
      });

      const notFound = await request(app).delete('/v1/store/orders/7').set(s.auth);
      const failed = await request(app).delete('/v1/store/orders/8').set(s.auth);

      expect(notFound.status).toBe(404);
      expect(notFound.body).toEqual({ code: 'order_not_found', message: 'Order 7 was not found', status: 404 });
      await expectConforms(notFound, 'cancelOrder');
      expect(failed.status).toBe(500);
      expect(failed.text).not.toContain('secret_table');
      await expectConforms(failed, 'cancelOrder');
    });
  });

  test('when the store is closed, requests get a 503 Error instead of a crash', async () => {
    const app = await createApp({ store: s.store });
    await s.store.close();

    const res = await request(app).get('/v1/store/orders').set(s.auth);

    expect(res.status).toBe(503);
    expect(res.body.code).toBe('service_unavailable');
    await expectConforms(res, 'listOrders');
  });

  test('an X-Request-Id from the client is echoed, and one is made up when absent', async () => {
    const app = await createApp({ store: s.store });

    const given = await request(app).get('/v1/store/orders').set(s.auth).set('X-Request-Id', 'abc-123');
    const made = await request(app).get('/v1/store/orders').set(s.auth);
    const hostile = await request(app).get('/v1/store/orders').set(s.auth).set('X-Request-Id', 'a b\tc');

    expect(given.headers['x-request-id']).toBe('abc-123');
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(hostile.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('ApiError', () => {
  test('it carries no stack trace, and leaves Error.stackTraceLimit as it was for every other error', () => {
    const limit = Error.stackTraceLimit;

    const error = new ApiError('order_not_found', 'Order 4 was not found');
    const other = new Error('boom');

    expect(error).toBeInstanceOf(Error);
    expect(error.stack).not.toMatch(/\n\s+at /);
    expect(error.toBody()).toEqual({ code: 'order_not_found', message: 'Order 4 was not found', status: 404 });
    expect(Error.stackTraceLimit).toBe(limit);
    expect(other.stack).toMatch(/\n\s+at /);
  });

  test('a message keeps within the Error schema whatever input it quotes: control characters escaped, cut at 1024', () => {
    const quoted = new ApiError('invalid_request', 'complete must be true or false, got "a\nb\u0000"');
    const long = new ApiError('invalid_request', `got "${'x'.repeat(5000)}"`);

    expect(quoted.message).toBe('complete must be true or false, got "a\\u000ab\\u0000"');
    expect(long.message).toHaveLength(1024);
    expect(long.message.endsWith('…')).toBe(true);
    expect(new ApiError('unauthorized').message).toBe('A valid API key is required');
  });
});

eachStore((s) => {
  test('a hostile query value quoted in a v3 message gets the 400 the contract allows, never a 500', async () => {
    const app = await createApp({ store: s.store });

    const control = await request(app).get('/v3/store/orders?complete=%0A%1B').set(s.auth);
    const long = await request(app)
      .get(`/v3/store/orders?complete=${'y'.repeat(3000)}`)
      .set(s.auth);

    expect(control.status).toBe(400);
    expect(control.body.message).toContain('\\u000a\\u001b');
    await expectConforms(control, 'listOrders', 'v3');
    expect(long.status).toBe(400);
    expect(long.body.message).toHaveLength(1024);
    await expectConforms(long, 'listOrders', 'v3');
  });
});
