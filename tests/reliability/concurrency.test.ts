import { spawn } from 'node:child_process';
import path from 'node:path';
import { BIN, cliEnv, serve, seedWithCli } from '../helpers/cli';
import { rowsOf } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';

// Many concurrent cancels of the same and of different orders, racing `orders ship` from the CLI
// (another process, another connection) on the same orders.
const tmp = tempDir();
afterAll(tmp.cleanup);

const ORDERS = 30;
const CANCELS_PER_ORDER = 6;
const SPREAD_MS = 4000;

function ship(db: string, id: number): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, '--db', db, 'orders', 'ship', String(id)], {
      env: cliEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    // 'close', not 'exit': the process can exit before its output has been read.
    child.on('close', (status) => resolve({ status, out }));
  });
}

test('every order ends cancelled or shipped, never both; one 204 per cancelled order; 409 only for shipped ones', async () => {
  const db = path.join(tmp.dir, 'race.db');
  const key = seedWithCli(db, 'race', ORDERS);
  const server = await serve(db);
  const ids = Array.from({ length: ORDERS }, (_, i) => i + 1);
  const shipped = ids.filter((id) => id % 2 === 0);

  // The ships are separate processes that take a moment to start, so the cancels are spread over
  // that moment: some orders are cancelled first and some shipped first.
  // Orders 2, 6, 10, ... are cancelled only after their ship has finished, so that outcome is
  // certain to occur; every other order's cancels race the ships.
  const ships = new Map(shipped.map((id) => [id, ship(db, id)]));
  const cancels = ids.flatMap((id) => {
    const at = id % 4 === 2 ? ships.get(id)! : new Promise((resolve) => setTimeout(resolve, (id / ORDERS) * SPREAD_MS));
    return Array.from({ length: CANCELS_PER_ORDER }, async () => {
      await at;
      const res = await fetch(`${server.url}/v1/store/orders/${id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${key}` } });
      if (res.status !== 204) expect(((await res.json()) as { status: number }).status).toBe(res.status);
      return { id, status: res.status };
    });
  });
  const [cancelled, shipResults] = await Promise.all([
    Promise.all(cancels),
    Promise.all(shipped.map(async (id) => ({ id, ...(await ships.get(id)!) }))),
  ]);
  server.child.kill('SIGTERM');
  await server.exited;

  const final = new Map(rowsOf(db).map((row) => [row.id, row]));
  for (const id of ids) {
    const row = final.get(id)!;
    const answers = cancelled.filter((c) => c.id === id).map((c) => c.status);
    expect(['cancelled', 'shipped']).toContain(row.status);
    expect(row.cancelled_at !== null && row.shipped_at !== null).toBe(false);
    if (row.status === 'cancelled') {
      expect([id, answers.filter((s) => s === 204).length]).toEqual([id, 1]);
      expect(answers.filter((s) => s !== 204).every((s) => s === 404)).toBe(true);
    } else {
      expect([id, answers.filter((s) => s === 204).length]).toEqual([id, 0]);
      expect(answers.every((s) => s === 409)).toBe(true);
    }
  }
  for (const result of shipResults) {
    const row = final.get(result.id)!;
    if (row.status === 'shipped') expect([result.id, result.status, result.out]).toEqual([result.id, 0, `order ${result.id} shipped\n`]);
    else expect([result.id, result.status, result.out]).toEqual([result.id, 1, expect.stringContaining('cancelled')]);
  }
  // The race really happened both ways.
  const shippedIds = shipped.filter((id) => final.get(id)!.status === 'shipped');
  for (const id of shipped.filter((id) => id % 4 === 2)) expect([id, final.get(id)!.status]).toEqual([id, 'shipped']);
  process.stdout.write(`concurrency: ${cancelled.length} cancels and ${shipped.length} ships raced; ${shippedIds.length} shipped first\n`);
  // Odd orders were never shipped, so they were all cancelled.
  for (const id of ids.filter((id) => id % 2 === 1)) expect(final.get(id)!.status).toBe('cancelled');
}, 60_000);
