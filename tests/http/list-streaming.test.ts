import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import request from 'supertest';
import { createApp } from '../../src/app';
import { createLogger } from '../../src/logger';
import type { OrderSnapshot, Store } from '../../src/store';
import { listen, readToEnd } from '../helpers/app';
import { expectConforms } from '../helpers/contract';
import { eachStore, order, storeKinds, withOverrides } from '../helpers/stores';

/**
 * The chunks of a chunked response's body as they were framed on the wire, the empty last one
 * included, read from a socket of its own.
 */
function rawChunks(url: string, path: string, headers: Record<string, string>): Promise<string[]> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let raw = '';
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.join('')}Connection: close\r\n\r\n`);
    socket.setEncoding('latin1');
    socket.on('data', (data: string) => (raw += data));
    socket.on('error', reject);
    socket.on('end', () => {
      const head = raw.indexOf('\r\n\r\n');
      if (!/^transfer-encoding: chunked$/im.test(raw.slice(0, head))) return reject(new Error(`not chunked: ${raw.slice(0, head)}`));
      const chunks: string[] = [];
      let rest = raw.slice(head + 4);
      for (;;) {
        const lineEnd = rest.indexOf('\r\n');
        const size = parseInt(rest.slice(0, lineEnd), 16);
        chunks.push(rest.slice(lineEnd + 2, lineEnd + 2 + size));
        if (size === 0) return resolve(chunks);
        rest = rest.slice(lineEnd + 2 + size + 2);
      }
    });
  });
}

eachStore((s) => {
  const many = (count: number, from = 1) => Array.from({ length: count }, (_, i) => order({ id: from + i, petId: i }));

  describe('the store and v1', () => {
    test.each([
      ['one chunk', 1000],
      ['many chunks', 3],
    ])('a snapshot gives each order its status, which v1 leaves out of its list (%s)', async (_case, chunkItems) => {
      await s.store.importOrders([order({ id: 1 }), { ...order({ id: 2 }), status: 'shipped' }, order({ id: 3 }), order({ id: 4 })]);
      await s.store.cancelOrder(3);

      const snapshot = await s.store.snapshotOrders(chunkItems);
      const records = [];
      for (let chunk = await snapshot.read(chunkItems); chunk.length > 0; chunk = await snapshot.read(chunkItems)) records.push(...chunk);
      await snapshot.close();
      const res = await request(await createApp({ store: s.store, listChunkItems: chunkItems }))
        .get('/v1/store/orders')
        .set(s.auth);

      // The pending and the shipped orders, not the cancelled one, each with v1's fields and no status.
      expect(records.map((r) => r.id)).toEqual([1, 2, 4]);
      expect(records.every((r) => Object.keys(r).join() === 'id,petId,quantity,shipDate,complete')).toBe(true);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(records);
      await expectConforms(res, 'listOrders');
    });
  });

  describe('streaming', () => {
    test('a list longer than one chunk is streamed, chunked, and is still exactly the array', async () => {
      await s.store.importOrders(many(25));

      const res = await request(await createApp({ store: s.store, listChunkItems: 4 }))
        .get('/v1/store/orders')
        .set(s.auth);

      expect(res.status).toBe(200);
      expect(res.headers['transfer-encoding']).toBe('chunked');
      expect(res.headers['content-length']).toBeUndefined();
      expect(res.body.map((o: { id: number }) => o.id)).toEqual(many(25).map((o) => o.id));
      await expectConforms(res, 'listOrders');
    });

    test('a list of exactly one chunk goes out whole, with a Content-Length, not chunked', async () => {
      await s.store.importOrders(many(4));

      const res = await request(await createApp({ store: s.store, listChunkItems: 4 }))
        .get('/v1/store/orders')
        .set(s.auth);

      expect(res.status).toBe(200);
      expect(res.headers['transfer-encoding']).toBeUndefined();
      expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.text)));
      expect(res.body.map((o: { id: number }) => o.id)).toEqual([1, 2, 3, 4]);
    });

    test('the last chunk closes the array in the same write, not in one of its own', async () => {
      await s.store.importOrders(many(5));
      const server = await listen({ store: s.store, listChunkItems: 4 });
      try {
        const chunks = await rawChunks(server.url, '/v1/store/orders', s.auth);

        // The four of the first chunk, then the fifth with the array's end, then the end of the body.
        expect(chunks).toHaveLength(3);
        expect(JSON.parse(chunks.join('')).map((o: { id: number }) => o.id)).toEqual([1, 2, 3, 4, 5]);
        expect(chunks[1]).toMatch(/^,\{"id":5,.*\}\]$/);
        expect(chunks[2]).toBe('');
      } finally {
        await server.close();
      }
    });

    test.each([
      ['exactly one chunk', 4],
      ['a multiple of the chunk size', 8],
      ['one past a chunk', 5],
    ])('a list of %s is a well-formed array', async (_case, count) => {
      await s.store.importOrders(many(count));

      const res = await request(await createApp({ store: s.store, listChunkItems: 4 }))
        .get('/v1/store/orders')
        .set(s.auth);

      expect(res.body).toHaveLength(count);
    });

    test('the streamed body is valid against the spec for edge values', async () => {
      const edges = [
        order({ id: -9007199254740991, petId: 9007199254740991, quantity: 9007199254740991, complete: true }),
        order({ id: 0, petId: -9007199254740991, quantity: 1 }),
        order({ id: 9007199254740991, shipDate: '2016-12-31T23:59:60Z' }),
        order({ id: 2, shipDate: '2026-01-01t00:00:00.123456789z' }),
        order({ id: 3, shipDate: '2026-06-30T23:59:59-12:00' }),
        order({ id: 4, shipDate: '0001-01-01T00:00:00+14:00' }),
        order({ id: 5, shipDate: '2024-02-29 12:00:00Z' }),
        order({ id: 6, shipDate: `2026-01-01T00:00:00.${'9'.repeat(38)}Z` }),
      ];
      await s.store.importOrders(edges);

      const res = await request(await createApp({ store: s.store, listChunkItems: 3 }))
        .get('/v1/store/orders')
        .set(s.auth);

      expect(res.status).toBe(200);
      await expectConforms(res, 'listOrders');
      expect(res.body).toHaveLength(edges.length);
      expect(res.text).toContain('"id":-9007199254740991,"petId":9007199254740991,"quantity":9007199254740991');
      expect(res.body.find((o: { id: number }) => o.id === 6).shipDate).toBe(`2026-01-01T00:00:00.${'9'.repeat(38)}Z`);
    });

    test('a cancel while a list is streaming goes through, and the stream stays a consistent snapshot', async () => {
      await s.store.importOrders(many(30));
      const snapshot = await s.store.snapshotOrders();
      const first = await snapshot.read(10);

      const outcome = await s.store.cancelOrder(25);
      const rest = [...(await snapshot.read(100))];
      await snapshot.close();

      expect(outcome).toBe('cancelled');
      expect([...first, ...rest].map((o) => o.id)).toEqual(many(30).map((o) => o.id));
      expect(snapshot.etag).not.toBe(await s.store.listEtag());
    });

    test.each([
      [5, [3, 7]],
      [5, [6, 6, 6]],
      [5, [1, 5]],
      [10, [10, 10]],
    ])(
      'a list longer than its first page (%i) reads every order once, in order, in chunks of %j and then the rest',
      async (prefetch, sizes) => {
        await s.store.importOrders(many(30));
        await s.store.cancelOrder(4);
        const snapshot = await s.store.snapshotOrders(prefetch);
        const chunks: number[][] = [];
        try {
          for (const size of sizes) chunks.push((await snapshot.read(size)).map((o) => o.id));
          for (let chunk = await snapshot.read(100); chunk.length > 0; chunk = await snapshot.read(100))
            chunks.push(chunk.map((o) => o.id));
        } finally {
          await snapshot.close();
        }

        expect(chunks.slice(0, sizes.length).map((chunk) => chunk.length)).toEqual(sizes);
        expect(chunks.flat()).toEqual(
          many(30)
            .map((o) => o.id)
            .filter((id) => id !== 4),
        );
      },
    );

    test('when the client goes away mid-stream, reading stops and the snapshot is released', async () => {
      await s.store.importOrders(many(5000));
      let reads = 0;
      let markClosed: () => void = () => undefined;
      const closed = new Promise<void>((resolve) => (markClosed = resolve));
      const watched = withOverrides(s.store, {
        snapshotOrders: async () => {
          const snapshot = await s.store.snapshotOrders();
          return {
            etag: snapshot.etag,
            read: (max) => ((reads += 1), snapshot.read(max)),
            close: () => (markClosed(), snapshot.close()),
          } satisfies OrderSnapshot;
        },
      });
      const server = await listen({ store: watched, listChunkItems: 10 });

      await new Promise<void>((resolve, reject) => {
        const req = http.get(`${server.url}/v1/store/orders`, { headers: s.auth }, (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        });
        req.on('error', (err) => (err.message.includes('socket hang up') ? undefined : reject(err)));
      });
      // The snapshot is released once the server sees the client gone (the test times out otherwise).
      await closed;
      await server.close();

      expect(reads).toBeLessThan(500);
    });

    test.each([['identity'], ['gzip'], ['br']])(
      'a failure mid-stream (%s) closes the connection so the client never sees a complete response, and is logged',
      async (coding) => {
        await s.store.importOrders(many(50));
        const lines: string[] = [];
        const failing = withOverrides(s.store, {
          snapshotOrders: async () => {
            const snapshot = await s.store.snapshotOrders();
            let reads = 0;
            return {
              etag: snapshot.etag,
              read: async (max) => {
                reads += 1;
                if (reads === 3) throw new Error('disk read failed');
                return snapshot.read(max);
              },
              close: () => snapshot.close(),
            };
          },
        });
        const server = await listen({
          store: failing,
          listChunkItems: 10,
          logger: createLogger('error', { write: (line: string) => lines.push(line) }),
        });

        const res = await readToEnd(`${server.url}/v1/store/orders`, { ...s.auth, 'Accept-Encoding': coding });
        await server.close();

        // The status line may or may not have gone out; the body must never look complete.
        expect(res.complete).toBe(false);
        expect([200, undefined]).toContain(res.status);
        expect(lines.join('')).toContain('stream failed; connection closed');
      },
    );

    test('a failure before the first byte is an ordinary Error response', async () => {
      const failing = withOverrides(s.store, {
        snapshotOrders: async () => ({
          etag: 'W/"x-1"',
          read: async () => {
            throw new Error('disk read failed');
          },
          close: async () => undefined,
        }),
      });

      const res = await request(await createApp({ store: failing }))
        .get('/v1/store/orders')
        .set(s.auth);

      expect(res.status).toBe(500);
      await expectConforms(res, 'listOrders');
    });
  });

  describe('conditional GET', () => {
    test('the list carries an ETag, and sending it back gets a 304 with no body', async () => {
      await s.store.importOrders(many(3));
      const app = await createApp({ store: s.store });

      const first = await request(app).get('/v1/store/orders').set(s.auth);
      const again = await request(app).get('/v1/store/orders').set(s.auth).set('If-None-Match', first.headers.etag!);

      expect(first.headers.etag).toMatch(/^W\/"[0-9a-f]+-\d+"$/);
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.etag).toBe(first.headers.etag);
      await expectConforms(first, 'listOrders');
    });

    test.each([
      ['a cancel', async (s: Store) => void (await s.cancelOrder(1))],
      ['a ship', async (s: Store) => void (await s.shipOrder(2))],
      ['an import', async (s: Store) => void (await s.importOrders([order({ id: 99 })]))],
    ])('after %s the ETag changes and the old one gets the full list', async (_case, write) => {
      await s.store.importOrders(many(3));
      const app = await createApp({ store: s.store });
      const before = await request(app).get('/v1/store/orders').set(s.auth);

      await write(s.store);
      const after = await request(app).get('/v1/store/orders').set(s.auth).set('If-None-Match', before.headers.etag!);

      expect(after.status).toBe(200);
      expect(after.headers.etag).not.toBe(before.headers.etag);
    });

    test('writes that change nothing keep the ETag', async () => {
      await s.store.importOrders([order({ id: 1, status: 'shipped' })]);
      const before = await s.store.listEtag();

      await s.store.cancelOrder(1);
      await s.store.cancelOrder(404);
      await s.store.shipOrder(1);
      await s.store.importOrders([]);

      expect(await s.store.listEtag()).toBe(before);
    });

    test.each([
      ['*', true],
      ['"nope", W/"x-1", {etag}', true],
      ['{strong}', true],
      ['W/"other-0"', false],
    ])('If-None-Match: %s matches by weak comparison: %s', async (header, matches) => {
      const etag = await s.store.listEtag();
      const value = header.replace('{etag}', etag).replace('{strong}', etag.slice(2));

      const res = await request(await createApp({ store: s.store }))
        .get('/v1/store/orders')
        .set(s.auth)
        .set('If-None-Match', value);

      expect(res.status).toBe(matches ? 304 : 200);
    });

    test('an If-None-Match over its 8,192 characters is ignored by v1, which declares no 400: the whole list, never a 500', async () => {
      const etag = await s.store.listEtag();

      const res = await request(await createApp({ store: s.store }))
        .get('/v1/store/orders')
        .set(s.auth)
        .set('If-None-Match', `${etag}, ${'W/"x", '.repeat(1200)}W/"y"`);

      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      await expectConforms(res, 'listOrders');
    });

    test('two databases never share an ETag, even at the same revision', async () => {
      const otherKind = storeKinds().find((k) => k.name === s.kind.name)!;
      await otherKind.setUp();
      const other = (await otherKind.open()).store;

      expect(await other.listEtag()).not.toBe(await s.store.listEtag());
      await other.close();
      await otherKind.tearDown();
    });
  });

  describe('compression', () => {
    const fetchRaw = (url: string, headers: Record<string, string>) =>
      new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        http
          .get(url, { headers }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
          })
          .on('error', reject);
      });

    test.each([
      ['br', 'br', zlib.brotliDecompressSync],
      ['gzip', 'gzip', zlib.gunzipSync],
      ['gzip;q=1, br;q=0.5', 'gzip', zlib.gunzipSync],
      ['br, gzip', 'br', zlib.brotliDecompressSync],
    ])('a large list is compressed when Accept-Encoding is %s', async (accept, coding, decode) => {
      await s.store.importOrders(many(500));
      const server = await listen({ store: s.store, listChunkItems: 100 });

      const res = await fetchRaw(`${server.url}/v1/store/orders`, { ...s.auth, 'Accept-Encoding': accept });
      await server.close();

      expect(res.headers['content-encoding']).toBe(coding);
      expect(res.headers.vary).toBe('Accept-Encoding');
      const list = JSON.parse(decode(res.body).toString('utf8'));
      expect(list).toHaveLength(500);
    });

    test.each([
      ['a small list, even when compression is accepted', 3, 'gzip, br'],
      ['any list, when the client accepts no compression', 500, 'identity'],
      ['any list, when the client sends no Accept-Encoding', 500, undefined],
    ])('the list is not compressed for %s', async (_case, count, accept) => {
      await s.store.importOrders(many(count));
      const server = await listen({ store: s.store });

      const res = await fetchRaw(`${server.url}/v1/store/orders`, accept ? { ...s.auth, 'Accept-Encoding': accept } : s.auth);
      await server.close();

      expect(res.headers['content-encoding']).toBeUndefined();
      expect(JSON.parse(res.body.toString('utf8'))).toHaveLength(count);
    });
  });
});
