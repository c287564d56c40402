import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { authorize } from '../../../src/http/steps/authorize';
import { runSteps, type Exchange, type Resume, type Step } from '../../../src/http/steps/step';
import { openSqliteStore, type Store } from '../../../src/store';
import { order } from '../../helpers/stores';
import { tempDir } from '../../helpers/temp-dir';

const tmp = tempDir();
afterAll(tmp.cleanup);

const HASH = 'a'.repeat(64);
const AT = '2026-11-28T10:00:00.000Z';

/** After the turn of the event loop that is running now. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs `run` from a message, which is I/O: it is delivered by the loop's next poll, where a request
 * read then would be answered.
 */
async function inNextPoll<T>(run: () => T | Promise<T>): Promise<T> {
  const channel = new MessageChannel();
  try {
    const ran = new Promise<T>((resolve, reject) => {
      channel.port2.once('message', () => {
        Promise.resolve().then(run).then(resolve, reject);
      });
    });
    channel.port1.postMessage('now');
    return await ran;
  } finally {
    channel.port1.close();
    channel.port2.close();
  }
}

/**
 * Two requests read in one poll, run through `wait` and then a handler as the dispatcher runs them:
 * each dispatch inside `Store.readTogether`, and the steps of a request resumed after a wait inside
 * it again. Another process cancels order 1 as they arrive, before `wait` lets them on (`meanwhile`
 * runs right after, in the same poll), and revokes the key once the first request has read. The
 * replies, and what each request read of the order and the key.
 */
async function twoLetOnAfter(
  store: Store,
  outside: Database.Database,
  wait: Step,
  exchange: object,
  meanwhile: () => void = () => undefined,
): Promise<{ replies: unknown[]; seen: string[] }> {
  const seen: string[] = [];
  const handle: Step = () => {
    const key = store.findKey(HASH, AT);
    // A SQLite store answers at once: a promise here would be a read this test does not mean.
    if (key instanceof Promise) throw new Error('a SQLite key check was not answered at once');
    seen.push(`order ${store.getOrder(1) === undefined ? 'gone' : 'found'}, key ${key?.state}`);
    if (seen.length === 1) revokeOutside(outside);
    return { status: 204 };
  };
  // What of an Exchange the steps read: its operation, and its key.
  const request = { method: 'GET', path: '/', query: '', headers: {}, context: { id: 'r' } };
  const dispatched = { ...exchange, request, res: {}, method: 'GET' } as unknown as Exchange;
  const thrown = (err: unknown) => {
    throw err;
  };
  const resume: Resume = (run) => store.readTogether(run);
  const replies = await inNextPoll(() => {
    const both = [0, 1].map(async () => resume(() => runSteps([wait, handle], dispatched, { thrown }, resume)));
    cancelOutside(outside);
    meanwhile();
    return Promise.all(both);
  });
  return { replies, seen };
}

/**
 * Runs `body` on a store with order 1 and key `k`, and another process's connection to its file,
 * which commits at once: as the CLI revoking a key, or another server on the same file. Both are
 * closed after it, whatever it does.
 */
async function withStore(name: string, body: (store: Store, outside: Database.Database) => Promise<void>): Promise<void> {
  const file = path.join(tmp.dir, `${name}.db`);
  const store = openSqliteStore(file);
  const outside = new Database(file);
  try {
    await store.importOrders([order({ id: 1 })]);
    await store.createKey('k', HASH, { scopes: ['orders:read'] });
    await body(store, outside);
  } finally {
    outside.close();
    await store.close();
  }
}

const cancelOutside = (outside: Database.Database): void => {
  outside.prepare("UPDATE orders SET status = 'cancelled', cancelled_at = ? WHERE id = 1").run(AT);
};

const revokeOutside = (outside: Database.Database): void => {
  outside.prepare('UPDATE api_keys SET revoked_at = ? WHERE name = ?').run(AT, 'k');
};

// The requests a server answers in one turn of the event loop had all arrived when the turn's
// first read was made; so their reads share one read transaction, the store as it stood at that
// read, and a commit made after it is theirs to miss, as it would be had it come a moment later.
// The next turn reads afresh, and so does whatever this process writes or is told of meanwhile.
describe("a SQLite store's reads in one turn of the event loop", () => {
  test('share one read transaction: a key revoked meanwhile by another process is refused from the next turn', async () => {
    await withStore('shared', async (store, outside) => {
      const [before, after] = store.readTogether(() => {
        const first = store.findKey(HASH, AT);
        revokeOutside(outside);
        return [first, store.findKey(HASH, AT)];
      });
      expect(before).toMatchObject({ name: 'k', state: 'active' });
      expect(after).toEqual(before);

      await nextTurn();
      expect(store.findKey(HASH, AT)).toMatchObject({ name: 'k', state: 'revoked' });
    });
  });

  test('are never joined after the loop has polled for I/O again, wherever the transaction began', async () => {
    await withStore('polled', async (store, outside) => {
      // Begun where a turn's end comes only after the next poll (the check phase), as a pipelined
      // request let through once its socket drained may begin it.
      await new Promise<void>((resolve) =>
        setImmediate(() => {
          void store.readTogether(() => store.findKey(HASH, AT));
          resolve();
        }),
      );
      revokeOutside(outside);
      expect(await inNextPoll(() => store.readTogether(() => store.findKey(HASH, AT)))).toMatchObject({ state: 'revoked' });
    });
  });

  test('share one read transaction among the requests that one rate-limit count lets on, begun after its commit', async () => {
    await withStore('counted', async (store, outside) => {
      const counted = authorize({ document: { paths: {} }, store, defaultPolicies: [], errors: {} as never, operations: [] });
      const exchange = {
        operation: { operationId: 'getOrderById', responses: {} },
        security: { keyName: 'k', scopes: ['orders:read'], policies: [{ quota: 1000, unit: 'day' }] },
      };
      // Each counted; one commit of the count lets both on, after the cancel: both find the order
      // gone, and the key as the first of them read it.
      const { replies, seen } = await twoLetOnAfter(store, outside, counted, exchange);
      expect(replies).toEqual([{ status: 204 }, { status: 204 }]);
      expect(seen).toEqual(['order gone, key active', 'order gone, key active']);
      await nextTurn();
      expect(store.findKey(HASH, AT)).toMatchObject({ state: 'revoked' });
    });
  });

  test('share one read transaction among the requests that a step lets on after a wait of its own (admission, say)', async () => {
    await withStore('resumed', async (store, outside) => {
      let open = (): void => undefined;
      const turn = new Promise<void>((resolve) => (open = resolve));
      const waits: Step = (_exchange, next) => turn.then(next);
      const exchange = { operation: { operationId: 'listOrders', responses: {} } };
      // Both wait for their turn, which comes in the check phase after the cancel: both read the
      // order gone, and the key as the first of them read it.
      const { replies, seen } = await twoLetOnAfter(store, outside, waits, exchange, () => setImmediate(open));
      expect(replies).toEqual([{ status: 204 }, { status: 204 }]);
      expect(seen).toEqual(['order gone, key active', 'order gone, key active']);
      await nextTurn();
      expect(store.findKey(HASH, AT)).toMatchObject({ state: 'revoked' });
    });
  });

  test('made outside readTogether (a timer, a worker) each read the store as it is', async () => {
    await withStore('apart', async (store, outside) => {
      expect(store.findKey(HASH, AT)).toMatchObject({ state: 'active' });
      revokeOutside(outside);
      expect(store.findKey(HASH, AT)).toMatchObject({ state: 'revoked' });
    });
  });

  test("end before this process writes, so that a write after another process's commit still succeeds", async () => {
    await withStore('write', async (store, outside) => {
      const created = store.readTogether(() => {
        void store.getOrder(1);
        revokeOutside(outside);
        return store.createKey('second', 'b'.repeat(64), { scopes: ['orders:read'] });
      });
      await expect(created).resolves.toBeUndefined();
      expect(store.findKey(HASH, AT)).toMatchObject({ state: 'revoked' });
    });
  });

  test('end when this process is told of a commit', async () => {
    await withStore('told', async (store, outside) => {
      const after = store.readTogether(() => {
        void store.findKey(HASH, AT);
        revokeOutside(outside);
        store.toldOfCommit();
        return store.findKey(HASH, AT);
      });
      expect(after).toMatchObject({ state: 'revoked' });
    });
  });

  test("end when this process's webhook bookkeeping commits, so that what it wrote is read back", async () => {
    await withStore('bookkeeping', async (store) => {
      await store.webhooks.createEndpoint({
        id: 'we_1',
        url: 'https://hooks.example.com/we_1',
        eventTypes: null,
        description: null,
        secret: `whsec_${Buffer.alloc(24, 1).toString('base64')}`,
        createdAt: AT,
        cursor: await store.latestEventPosition(),
      });
      // In a turn that reads requests, so that no poll comes between the turn's reads and the
      // bookkeeping: its batch is queued first, and commits on its own connection before those
      // reads end; what waits on it reads the log at once.
      const log = await inNextPoll(() => {
        const logged = store.webhooks.logAttempt('we_1', {
          eventId: 'evt_1',
          attempt: 1,
          at: AT,
          status: 204,
          error: null,
          durationMs: 1,
          outcome: 'delivered',
        });
        void store.readTogether(() => store.getOrder(1));
        return logged.then(() => store.webhooks.attempts('we_1', undefined, 10));
      });
      expect(log.map(({ eventId }) => eventId)).toEqual(['evt_1']);
    });
  });

  // The requests of one turn that bring the same key share the rows its check read (one snapshot
  // answers the same statement the same way); each is still judged on its own, and nothing read
  // outlives the transaction it was read in.
  test("share a key's rows: each key gets its own, each request is judged at its own time, and a revocation here is seen at once", async () => {
    await withStore('kept', async (store) => {
      const other = 'c'.repeat(64);
      await store.createKey('expiring', other, { scopes: ['orders:read'], expiresAt: '2026-11-28T10:00:30.000Z' });
      const seen = store.readTogether(() => [
        store.findKey(HASH, AT),
        store.findKey(other, AT),
        store.findKey(other, '2026-11-28T10:01:00.000Z'),
        store.findKey('d'.repeat(64), AT),
        store.findKey(HASH, AT),
      ]);
      expect(seen).toEqual([
        expect.objectContaining({ name: 'k', state: 'active' }),
        expect.objectContaining({ name: 'expiring', state: 'active' }),
        expect.objectContaining({ name: 'expiring', state: 'expired' }),
        null,
        expect.objectContaining({ name: 'k', state: 'active' }),
      ]);

      // This process's write ends the turn's transaction first, and what it kept with it.
      const afterRevoking = await store.readTogether(async () => {
        expect(store.findKey(HASH, AT)).toMatchObject({ state: 'active' });
        const revoking = store.revokeKey('k');
        const after = store.findKey(HASH, AT);
        await revoking;
        return [after, store.findKey(HASH, AT)];
      });
      expect(afterRevoking).toEqual([expect.objectContaining({ state: 'revoked' }), expect.objectContaining({ state: 'revoked' })]);
    });
  });
});
