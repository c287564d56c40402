import { spawn } from 'node:child_process';
import path from 'node:path';
import { BIN, cli, cliEnv, serve } from '../helpers/cli';
import { rowsOf, tempDir } from '../helpers/store';

// Many concurrent cancels of the same and of different orders, racing `orders ship` from the CLI
// (another process, another connection) on the same orders.
const tmp = tempDir();
afterAll(tmp.cleanup);

const ORDERS = 30;
const CANCELS_PER_ORDER = 6;

function ship(db: string, id: number): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, '--db', db, 'orders', 'ship', String(id)], { env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('exit', (status) => resolve({ status, out }));
  });
}

test('every order ends cancelled or shipped, never both; one 204 per cancelled order; 409 only for shipped ones', async () => {
  const db = path.join(tmp.dir, 'race.db');
  const key = cli(['--db', db, 'keys', 'create', '--name', 'race']).stdout.trim();
  const records = Array.from({ length: ORDERS }, (_, i) => ({ id: i + 1, petId: 1, quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false }));
  expect(cli(['--db', db, 'orders', 'import', '-'], { input: JSON.stringify(records) }).status).toBe(0);
  const server = await serve(db);
  const ids = records.map((record) => record.id);
  const shipped = ids.filter((id) => id % 2 === 0);

  const cancels = ids.flatMap((id) =>
    Array.from({ length: CANCELS_PER_ORDER }, async () => {
      const res = await fetch(`${server.url}/v1/store/orders/${id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${key}` } });
      if (res.status !== 204) expect(((await res.json()) as { status: number }).status).toBe(res.status);
      return { id, status: res.status };
    }),
  );
  const ships = shipped.map(async (id) => ({ id, ...(await ship(db, id)) }));
  const [cancelled, shipResults] = await Promise.all([Promise.all(cancels), Promise.all(ships)]);
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
  // Odd orders were never shipped, so they were all cancelled.
  for (const id of ids.filter((id) => id % 2 === 1)) expect(final.get(id)!.status).toBe('cancelled');
}, 60_000);
