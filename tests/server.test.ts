import express from 'express';
import request from 'supertest';
import { createHttpServer } from '../src/server';

describe('createHttpServer', () => {
  test("builds requests and responses on the app's prototypes, so express has nothing to swap", async () => {
    const app = express();
    const before: object[] = [];
    const inside: object[] = [];
    app.use((req, res) => {
      inside.push(Object.getPrototypeOf(req) as object, Object.getPrototypeOf(res) as object);
      res.json({ path: req.path, host: req.get('host') });
    });
    const server = createHttpServer(app);
    // Looks before express does, to compare with what its handler sees after express's Object.setPrototypeOf.
    server.prependListener('request', (req, res) => {
      before.push(Object.getPrototypeOf(req) as object, Object.getPrototypeOf(res) as object);
    });

    const res = await request(server).get('/a/b?c=d');

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ path: '/a/b', host: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
    expect(inside[0]).toBe(before[0]);
    expect(inside[1]).toBe(before[1]);
    expect(app.request.isPrototypeOf(before[0]!)).toBe(true);
    expect(app.response.isPrototypeOf(before[1]!)).toBe(true);
  });
});
