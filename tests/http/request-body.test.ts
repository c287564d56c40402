import request from 'supertest';
import { createApp } from '../../src/app';
import type { OperationHandlers } from '../../src/http/define-handler';
import { expectConforms } from '../helpers/contract';
import { documentWithNotes } from '../helpers/documents';
import { eachStore } from '../helpers/stores';

// No v1 operation takes a body, but a spec author may add one: the server must read it within the
// size limit, parse it, validate it against the document, and hand it to the handler.

/** The handler a scaffold would write: it gets the parsed, validated body. */
const echo = { createNote: async ({ body }: { body: unknown }) => ({ status: 201, body }) } as unknown as Partial<OperationHandlers>;

eachStore((s) => {
  const app = () => createApp({ store: s.store, document: documentWithNotes(), handlers: echo });
  const post = async (body: string, contentType?: string) => {
    const req = request(await app())
      .post('/v1/notes')
      .set(s.auth);
    if (contentType !== undefined) req.set('Content-Type', contentType);
    return req.send(body);
  };

  test.each([['application/json'], ['application/json; charset=utf-8'], ['Application/JSON']])(
    'a valid JSON body sent as %s reaches the handler parsed and validated',
    async (contentType) => {
      const res = await post('{"text":"feed the cat","pinned":true}', contentType);

      expect(res.status).toBe(201);
      expect(res.body).toEqual({ text: 'feed the cat', pinned: true });
    },
  );

  test.each([
    ['text/plain', 'text/plain'],
    ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
    ['no Content-Type at all', undefined],
  ])('a body sent as %s is a 415 Error', async (_case, contentType) => {
    const res = await post('{"text":"x"}', contentType);

    expect(res.status).toBe(415);
    expect(res.body).toEqual({ code: 'invalid_request', message: 'The request body must be application/json', status: 415 });
  });

  test.each([
    ['malformed JSON', '{"text":', 'The request body is not valid JSON'],
    ['a missing required field', '{"pinned":false}', 'body.text is required'],
    ['an unknown field', '{"text":"x","colour":"red"}', 'body.colour is not a known field'],
    ['a field over its bound', `{"text":"${'x'.repeat(21)}"}`, 'body.text must NOT have more than 20 characters'],
    ['no body when one is required', '', 'The request body is required'],
  ])('%s is a 400 Error that says what is wrong', async (_case, body, message) => {
    const res = await post(body, 'application/json');

    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'invalid_request', message, status: 400 });
    await expectConforms(res);
  });

  test('an operation that declares no body still ignores one, as v1 always has', async () => {
    const res = await request(await app())
      .delete('/v1/store/orders/1')
      .set(s.auth)
      .set('Content-Type', 'text/plain')
      .send('ignored');

    expect(res.status).toBe(404);
    expect(res.body.code).toBe('order_not_found');
  });
});

eachStore((s) => {
  test('a refused body goes through the same reply steps as any answer: a deprecated operation says so on its 415', async () => {
    const document = documentWithNotes((operation) => {
      Object.assign(operation, { deprecated: true, 'x-deprecated-at': '2026-11-01T00:00:00Z' });
    });
    const app = await createApp({ store: s.store, document, handlers: echo });

    const res = await request(app).post('/v1/notes').set(s.auth).set('Content-Type', 'text/plain').send('x');

    expect(res.status).toBe(415);
    expect(res.headers.deprecation).toBe('@1793491200');
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
    expect(res.headers['cache-control']).toBe('no-store');
  });
});
