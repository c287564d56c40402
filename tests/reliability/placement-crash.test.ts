import path from 'node:path';
import { cli, serve } from '../helpers/cli';
import { freshDatabase, sql } from '../helpers/postgres';
import { rowsOf } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';

// SIGKILL the real server while clients place orders, each under an Idempotency-Key of its own;
// restart it, and retry every key: each acknowledged placement is there once and answers the same
// order again; each placement the kill cut short is there once or not at all, and its retry places
// it then. On each store the server can run on.
const tmp = tempDir();
afterAll(tmp.cleanup);

const CLIENTS = 8;
/** The kill comes once this many more placements have been acknowledged: a moment of the load, not of the clock. */
const KILL_AFTER_ACKNOWLEDGED = [15, 40, 80];
const ORDER = { petId: 7, quantity: 1, shipDate: '2026-12-24T10:00:00Z' };

interface Deployment {
  /** Flags and environment that put `serve` and the CLI on this store. */
  readonly flags: string[];
  readonly env: NodeJS.ProcessEnv;
  /** Every order id the store holds. */
  ids(): Promise<number[]>;
  close(): Promise<void>;
}

const deployments: Array<[string, () => Promise<Deployment>]> = [
  [
    'sqlite',
    async () => {
      const db = path.join(tmp.dir, 'placements.db');
      return { flags: ['--db', db], env: {}, ids: async () => rowsOf(db).map((row) => row.id), close: async () => undefined };
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
        ids: async () => (await sql<{ id: number }>(database.url, 'SELECT id FROM orders ORDER BY id')).map((row) => row.id),
        close: () => database.drop(),
      };
    },
  ]);
}

describe.each(deployments)('on %s', (_name, deploy) => {
  test(`every acknowledged placement survives ${KILL_AFTER_ACKNOWLEDGED.length} SIGKILLs once, and a retry of each key answers it`, async () => {
    const deployment = await deploy();
    try {
      const db = deployment.flags[1] ?? path.join(tmp.dir, 'unused.db');
      const created = cli([...deployment.flags, 'keys', 'create', '--name', 'placer', '--scopes', 'orders:read,orders:place'], {
        env: deployment.env,
      });
      expect(created.stderr).toBe('');
      const auth = { Authorization: `Bearer ${created.stdout.trim()}`, 'Content-Type': 'application/json' };
      /** The first answer of each acknowledged key, as its body came. */
      const acknowledged = new Map<string, string>();
      /** Keys whose placement the kill cut short: sent, never answered. */
      const unanswered = new Set<string>();
      let sent = 0;

      const place = (url: string, key: string) =>
        fetch(`${url}/v3/store/orders`, { method: 'POST', headers: { ...auth, 'Idempotency-Key': key }, body: JSON.stringify(ORDER) });

      for (const killAfter of KILL_AFTER_ACKNOWLEDGED) {
        const server = await serve(db, [], deployment.env);
        const target = acknowledged.size + killAfter;
        let killed = false;
        let kill: () => void = () => undefined;
        const enough = new Promise<void>((resolve) => (kill = resolve));
        const client = async (): Promise<void> => {
          while (!killed) {
            const key = `placement-${(sent += 1)}`;
            let res: Response;
            try {
              res = await place(server.url, key);
            } catch {
              unanswered.add(key); // the server died under this request
              return;
            }
            expect(res.status).toBe(201);
            acknowledged.set(key, await res.text());
            if (acknowledged.size >= target) kill();
          }
        };
        const load = Promise.all(Array.from({ length: CLIENTS }, () => client()));
        await enough;
        killed = true;
        server.child.kill('SIGKILL');
        await server.exited;
        await load;
      }

      const server = await serve(db, [], deployment.env);
      try {
        const orders = new Set<number>();
        for (const [key, first] of acknowledged) {
          const again = await place(server.url, key);
          expect([key, again.status, await again.text()]).toEqual([key, 201, first]);
          orders.add((JSON.parse(first) as { id: number }).id);
        }
        for (const key of unanswered) {
          const retried = await place(server.url, key);
          expect([key, retried.status]).toEqual([key, 201]);
          orders.add(((await retried.json()) as { id: number }).id);
        }
        // One order per key, and no other: none lost, none twice.
        const ids = await deployment.ids();
        expect(ids.length).toBe(acknowledged.size + unanswered.size);
        expect(new Set(ids)).toEqual(orders);
        process.stdout.write(
          `placement crash (${_name}): ${KILL_AFTER_ACKNOWLEDGED.length} kills, ${acknowledged.size} acknowledged and ${unanswered.size} cut-short placements, each once\n`,
        );
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
    } finally {
      await deployment.close();
    }
  }, 90_000);
});
