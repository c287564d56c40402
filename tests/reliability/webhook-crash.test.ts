import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import { cli, serve, type Served } from '../helpers/cli';
import { freshDatabase, sql } from '../helpers/postgres';
import { tempDir } from '../helpers/temp-dir';
import { until } from '../helpers/wait';

// Webhooks through crashes: clients place and cancel orders while the real servers deliver each
// change to a receiver on loopback that fails one attempt in five; the servers are killed with
// SIGKILL three times and started again. Once everything has settled, every event committed has
// reached the receiver at least once, and no two attempts were ever under way at once (one
// endpoint: two at once would be two instances attempting it). On SQLite with one instance, and on
// PostgreSQL with two.
const tmp = tempDir();
afterAll(tmp.cleanup);

const CLIENTS = 8;
/** Each round ends with a SIGKILL once this many more orders have been placed: a moment of the load, not of the clock. */
const KILL_AFTER_PLACED = [20, 40, 60];
const ORDER = { petId: 7, quantity: 1, shipDate: '2026-12-24T10:00:00Z' };
/**
 * Short retries and a short attempt (so a lease of four seconds), so that the test settles in
 * seconds; and delivery at the servers' own priority, which this test is not about: beside a
 * suite that keeps every core busy, a lower priority (nice 10 as shipped) makes delivery wait longer.
 */
const WEBHOOK_ENV = {
  PETSTORE_WEBHOOK_NICE: '0',
  PETSTORE_WEBHOOK_ALLOW_HTTP: 'true',
  PETSTORE_WEBHOOK_ALLOW_PRIVATE: 'true',
  PETSTORE_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,400ms,800ms,1s,1s,1s,1s,1s',
  PETSTORE_WEBHOOK_TIMEOUT_MS: '1000',
};

interface Deployment {
  readonly flags: string[];
  readonly env: NodeJS.ProcessEnv;
  readonly instances: number;
  /** The seq of every event the store holds. */
  eventSeqs(): Promise<number[]>;
  close(): Promise<void>;
}

const deployments: Array<[string, () => Promise<Deployment>]> = [
  [
    'sqlite',
    async () => {
      const db = path.join(tmp.dir, 'webhooks.db');
      return {
        flags: ['--db', db],
        env: {},
        instances: 1,
        eventSeqs: async () => {
          const raw = new Database(db, { readonly: true });
          try {
            return raw.prepare<[], number>('SELECT seq FROM order_events ORDER BY seq').pluck().all();
          } finally {
            raw.close();
          }
        },
        close: async () => undefined,
      };
    },
  ],
];
if (process.env.PETSTORE_TEST_PG_AVAILABLE === '1') {
  deployments.push([
    'postgres',
    async () => {
      const database = await freshDatabase();
      return {
        flags: [],
        env: { PETSTORE_DATABASE_URL: database.url },
        instances: 2,
        eventSeqs: async () =>
          (await sql<{ seq: string }>(database.url, 'SELECT seq FROM order_events ORDER BY seq')).map((row) => Number(row.seq)),
        close: () => database.drop(),
      };
    },
  ]);
}

describe.each(deployments)('on %s', (name, deploy) => {
  test(`every event reaches the receiver at least once through ${KILL_AFTER_PLACED.length} SIGKILLs, one attempt at a time`, async () => {
    const deployment = await deploy();
    // The receiver: every attempt it got, by webhook-id; a 500 to one attempt in five.
    const received = new Map<string, number>();
    let attempts = 0;
    let failed = 0;
    let inFlight = 0;
    let mostInFlight = 0;
    const receiver = http.createServer((req, res) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      req.resume();
      req.on('end', () => {
        attempts += 1;
        const fail = attempts % 5 === 0;
        setTimeout(() => {
          inFlight -= 1;
          if (fail) failed += 1;
          else {
            const id = String(req.headers['webhook-id']);
            received.set(id, (received.get(id) ?? 0) + 1);
          }
          res.writeHead(fail ? 500 : 204).end();
        }, 2);
      });
      req.on('close', () => undefined);
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as AddressInfo;
    const servers: Served[] = [];
    try {
      const db = deployment.flags[1] ?? path.join(tmp.dir, 'unused.db');
      const env = { ...deployment.env, ...WEBHOOK_ENV };
      const created = cli(
        [...deployment.flags, 'keys', 'create', '--name', 'clerk', '--scopes', 'orders:read,orders:cancel,orders:place'],
        { env },
      );
      expect(created.stderr).toBe('');
      const added = cli([...deployment.flags, 'webhooks', 'add', `http://127.0.0.1:${port}/hooks`], { env });
      expect(added.stderr).toBe('');
      expect(added.stdout).toMatch(/^id: we_\w+\nsecret: whsec_\S+\n$/);
      const auth = { Authorization: `Bearer ${created.stdout.trim()}`, 'Content-Type': 'application/json' };
      let placed = 0;
      let sent = 0;

      const start = async () => {
        for (let n = 0; n < deployment.instances; n += 1) servers.push(await serve(db, [], env));
      };
      for (const killAfter of KILL_AFTER_PLACED) {
        await start();
        const target = placed + killAfter;
        let killed = false;
        let kill: () => void = () => undefined;
        const enough = new Promise<void>((resolve) => (kill = resolve));
        const client = async (n: number): Promise<void> => {
          const url = servers[n % servers.length]!.url;
          while (!killed) {
            try {
              const res = await fetch(`${url}/v3/store/orders`, {
                method: 'POST',
                headers: { ...auth, 'Idempotency-Key': `order-${(sent += 1)}` },
                body: JSON.stringify(ORDER),
              });
              if (res.status !== 201) throw new Error(`placeOrder answered ${res.status}`);
              const { id } = (await res.json()) as { id: number };
              placed += 1;
              // Every other order is cancelled: its order.cancelled event too.
              if (id % 2 === 0) await fetch(`${url}/v3/store/orders/${id}`, { method: 'DELETE', headers: auth });
              if (placed >= target) kill();
            } catch (err) {
              if (killed) return; // the server died under this request
              throw err;
            }
          }
        };
        const load = Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
        await enough;
        killed = true;
        for (const server of servers.splice(0)) {
          server.child.kill('SIGKILL');
          await server.exited;
        }
        await load;
      }

      // Started again, the servers deliver what is left, once each dead instance's lease has run out.
      await start();
      const seqs = await deployment.eventSeqs();
      const missing = () => seqs.filter((seq) => !received.has(`evt_${seq}`));
      await until(
        () => missing().length === 0,
        `every one of ${seqs.length} events received (missing: ${missing().slice(0, 5).join(', ')}…)`,
        120_000,
      );

      expect(missing()).toEqual([]);
      expect(mostInFlight).toBe(1);
      const deliveries = [...received.values()].reduce((sum, count) => sum + count, 0);
      process.stdout.write(
        `webhook crash (${name}, ${deployment.instances} instance(s)): ${KILL_AFTER_PLACED.length} kills, ${seqs.length} events committed, ${attempts} attempts received, ${failed} answered 500 and retried, ${deliveries - received.size} duplicates received, none lost\n`,
      );
    } finally {
      for (const server of servers) {
        server.child.kill('SIGTERM');
        await server.exited;
      }
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
      await deployment.close();
    }
  }, 180_000);
});
