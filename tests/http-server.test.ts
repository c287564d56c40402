import express from 'express';
import request from 'supertest';
import { createHttpServer } from '../src/server';

describe('createHttpServer', () => {
  test('builds requests and responses on the app prototypes, so express has nothing to swap', async () => {
    const app = express();
    const seen: boolean[] = [];
    app.use((req, res) => {
      res.json({ path: req.path, host: req.get('host') });
    });
    const server = createHttpServer(app);
    // Looks before express does: its own Object.setPrototypeOf would make any later look pass.
    server.prependListener('request', (req, res) => {
      seen.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response);
    });

    const res = await request(server).get('/a/b?c=d');

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ path: '/a/b', host: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
    expect(seen).toEqual([true, true]);
  });
});
