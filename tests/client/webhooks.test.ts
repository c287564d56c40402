import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOrdersClient, OrdersApiError, verifyWebhook, WebhookVerificationError, type WebhookEvent } from '../../src/client';
import { LOCAL_WEBHOOKS, serviceOptions } from '../../src/config';
import { silentLogger } from '../../src/logger';
import { startServer } from '../../src/server';
import { eachStore, order } from '../helpers/stores';
import { until } from '../helpers/wait';

// End to end, on each store: a consumer makes an endpoint through the typed client, the server as
// it ships delivers each change to a receiver on loopback, and the receiver checks each delivery
// with verifyWebhook.
eachStore((s) => {
  test('a consumer makes an endpoint, the server delivers each change to it, and verifyWebhook accepts each and refuses a forgery', async () => {
    const got: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const other = await s.fresh.another();
    const server = await startServer({
      store: other,
      logger: silentLogger,
      host: '127.0.0.1',
      port: 0,
      shutdownTimeoutMs: 1000,
      service: serviceOptions({ webhooks: LOCAL_WEBHOOKS }),
    });
    try {
      const client = createOrdersClient({ baseUrl: server.url, apiKey: s.key });
      const { port } = receiver.address() as AddressInfo;
      const made = await client.v3.webhooks.create({
        url: `http://127.0.0.1:${port}/petstore`,
        events: ['order.created', 'order.shipped'],
      });
      expect(made.secret).toMatch(/^whsec_/);
      expect(await client.v3.webhooks.get(made.id)).toEqual({
        id: made.id,
        url: made.url,
        events: made.events,
        status: 'enabled',
        createdAt: made.createdAt,
      });
      expect((await client.v3.webhooks.list()).endpoints.map((each) => each.id)).toEqual([made.id]);

      const placed = await client.v3.placeOrder({ petId: 7, quantity: 1, shipDate: '2026-12-01T10:00:00Z' });
      await client.v3.shipOrder(placed.order.id);
      await s.store.importOrders([order({ id: placed.order.id + 1 })]);
      await client.v3.cancelOrder(placed.order.id + 1); // not asked for: never sent
      await until(() => got.length >= 3, 'three deliveries', 15_000);

      const events = got.map(({ headers, body }) => verifyWebhook(made.secret, headers, body));
      expect(events.map((event: WebhookEvent) => [event.type, event.orderId])).toEqual([
        ['order.created', placed.order.id],
        ['order.shipped', placed.order.id],
        ['order.created', placed.order.id + 1],
      ]);
      const [first] = got;
      expect(() => verifyWebhook(made.secret, first!.headers, first!.body.replace('"quantity":1', '"quantity":2'))).toThrow(
        WebhookVerificationError,
      );
      const old = { ...first!.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 600) };
      expect(() => verifyWebhook(made.secret, old, first!.body)).toThrow('webhook-timestamp is too old');

      // The log shows each delivery; the other operations answer as the document says.
      await until(async () => (await client.v3.webhooks.deliveries(made.id)).deliveries.length >= 3, 'the log shows three deliveries');
      const log = await client.v3.webhooks.deliveries(made.id);
      expect(log.deliveries.every((each) => each.outcome === 'delivered' && each.status === 204)).toBe(true);
      // The metrics say the same: three delivered, none disabled, and how far behind the endpoint is.
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toMatch(/^petstore_webhook_deliveries_total\{outcome="delivered"\} 3$/m);
      expect(metrics).toMatch(/^petstore_webhook_endpoints_disabled 0$/m);
      expect(metrics).toMatch(new RegExp(`^petstore_webhook_oldest_undelivered_seconds\\{endpoint="${made.id}"\\} \\d`, 'm'));
      const rotated = await client.v3.webhooks.rotateSecret(made.id);
      expect(rotated.secret).not.toBe(made.secret);
      expect(await client.v3.webhooks.update(made.id, { description: 'fulfilment' })).toMatchObject({ description: 'fulfilment' });
      expect(await client.v3.webhooks.replay(made.id, '2999-01-01T00:00:00Z')).toBe(0);
      await client.v3.webhooks.remove(made.id);
      await expect(client.v3.webhooks.get(made.id)).rejects.toMatchObject({ status: 404, code: 'webhook_endpoint_not_found' });
      await expect(client.v3.webhooks.remove(made.id)).rejects.toBeInstanceOf(OrdersApiError);
    } finally {
      await server.close();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});
