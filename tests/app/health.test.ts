import request from 'supertest';
import { createApp } from '../../src/app';
import { eachStore } from '../helpers/stores';

// /healthz answers while the process is up; /readyz only while the store answers.
eachStore((s) => {
  describe('health endpoints', () => {
    test('/healthz answers 200 without a key', async () => {
      const res = await request(await createApp({ store: s.store })).get('/healthz');

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
    });

    test('/readyz answers 200 while the store is reachable', async () => {
      const res = await request(await createApp({ store: s.store })).get('/readyz');

      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ready' });
    });

    test('/readyz answers a 503 Error once the store is gone, while /healthz stays 200', async () => {
      const app = await createApp({ store: s.store });
      await s.store.close();

      const ready = await request(app).get('/readyz');
      const health = await request(app).get('/healthz');

      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ code: 'service_unavailable', message: 'The order store is unavailable', status: 503 });
      expect(health.status).toBe(200);
    });
  });
});
