import request from 'supertest';
import { createApp } from '../../src/app';
import { createContractAjv } from '../../src/openapi';
import { createLogger } from '../../src/logger';
import { scaffoldedHandlers } from '../helpers/app';
import { expectConforms } from '../helpers/contract';
import { documentWithNotes, NOTE_SCHEMA } from '../helpers/documents';
import { eachStore, order } from '../helpers/stores';

// An operation whose handler module still returns `mock` (as `npm run scaffold` writes it) answers
// what the document describes, marked X-Mock: true, through the same checks as any reply.

const validateNote = createContractAjv(documentWithNotes()).compile(NOTE_SCHEMA);

eachStore((s) => {
  test('a mocked list answers the example of its 200 with the ETag it declares, marked X-Mock', async () => {
    const app = await createApp({ store: s.store, modules: scaffoldedHandlers('v1', 'listOrders') });

    const res = await request(app).get('/v1/store/orders').set(s.auth);

    expect(res.status).toBe(200);
    expect(res.headers['x-mock']).toBe('true');
    expect(res.headers.etag).toBe('W/"3f2a9c0e1b7d4a65-42"');
    expect(res.body).toEqual([
      { id: 1, petId: 101, quantity: 1, shipDate: '2026-12-01T09:30:00Z', complete: false },
      { id: 2, petId: 205, quantity: 3, shipDate: '2026-11-20T15:00:00Z', complete: true },
    ]);
    await expectConforms(res, 'listOrders');
  });

  test('a mocked operation whose success has no body answers 204 with no body, and the store is untouched', async () => {
    await s.store.importOrders([order({ id: 5 })]);
    const app = await createApp({ store: s.store, modules: scaffoldedHandlers('v1', 'cancelOrder') });

    const res = await request(app).delete('/v1/store/orders/5').set(s.auth);

    expect(res.status).toBe(204);
    expect(res.headers['x-mock']).toBe('true');
    expect(res.text).toBe('');
    expect((await s.rows()).map((row) => row.status)).toEqual(['pending']);
  });

  test('without an example, the mock is generated from the response schema and valid against it', async () => {
    const app = await createApp({ store: s.store, document: documentWithNotes(), modules: scaffoldedHandlers('v1', 'createNote') });

    const res = await request(app).post('/v1/notes').set(s.auth).send({ text: 'feed the cat' });

    expect(res.status).toBe(201);
    expect(res.headers['x-mock']).toBe('true');
    expect(validateNote(res.body)).toBe(true);
    expect(res.body).toEqual({ text: 'string', pinned: true });
  });

  test.each([
    ['no API key', {}, { text: 'x' }, 401],
    ['a body that breaks its schema', { auth: true }, { text: 'x', colour: 'red' }, 400],
  ])('a mocked operation still refuses a request with %s', async (_case, options, body, status) => {
    const app = await createApp({ store: s.store, document: documentWithNotes(), modules: scaffoldedHandlers('v1', 'createNote') });

    const res = await request(app)
      .post('/v1/notes')
      .set('auth' in options ? s.auth : {})
      .send(body);

    expect(res.status).toBe(status);
    expect(res.headers['x-mock']).toBeUndefined();
    await expectConforms(res);
  });

  test('a document whose example breaks its own schema gets a logged 500, never the wrong mock', async () => {
    const lines: string[] = [];
    const document = documentWithNotes((operation) => {
      const created = operation.responses['201'] as { content: Record<string, { example?: unknown }> };
      created.content['application/json']!.example = { text: 'far more than twenty characters' };
    });
    const app = await createApp({
      store: s.store,
      document,
      modules: scaffoldedHandlers('v1', 'createNote'),
      logger: createLogger('error', { write: (line: string) => lines.push(line) }),
    });

    const res = await request(app).post('/v1/notes').set(s.auth).send({ text: 'x' });

    expect(res.status).toBe(500);
    expect(res.headers['x-mock']).toBeUndefined();
    expect(lines.join('')).toContain('response violates the contract');
  });

  test('the app says at start-up which operations answer mocks', async () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(line) });

    await createApp({ store: s.store, document: documentWithNotes(), modules: scaffoldedHandlers('v1', 'createNote'), logger });

    const warning = lines.map((line) => JSON.parse(line)).find((line) => line.msg.includes('mocks'));
    // 40 is pino's warn.
    expect(warning).toMatchObject({ level: 40, operations: ['createNote'] });
  });
});
