import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { tempDir } from '../helpers/temp-dir';
import { ROOT } from '../helpers/project';

const STORE = path.join(ROOT, 'dist', 'src', 'store', 'index.js');

/**
 * A child process that opens SQLite stores, uses their statements, drops them, and lets the
 * garbage collector finalize them where a test runner does: while a new `vm` context is made,
 * which runs outside any JavaScript context, and then by a forced collection before exit.
 * An addon whose destructors need the current Node environment aborts the process there
 * (SIGABRT in `RemoveEnvironmentCleanupHook`); the store's addon must not.
 */
const CHILD = `
const vm = require('node:vm');
const { openSqliteStore } = require(${JSON.stringify(STORE)});
const [file] = process.argv.slice(-1);
(async () => {
  // Every kind of statement the store prepares, used and dropped.
  for (let round = 0; round < 5; round += 1) {
    const store = openSqliteStore(file);
    const hash = round.toString(16).padStart(64, '0');
    await store.createKey('k' + round, hash, { scopes: ['orders:read'] });
    await store.importOrders([{ id: round + 1, petId: 1, quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false }]);
    await store.pageOrders({ filter: {}, limit: 10 });
    const snapshot = await store.snapshotOrders();
    await snapshot.read(10);
    await snapshot.close();
    await store.cancelOrder(round + 1);
    await store.close();
  }
  // Stores whose statements are still young when they are dropped, and a new context made at once:
  // a test runner makes one like it for each test file, and making one collects garbage.
  for (let round = 0; round < 20; round += 1) {
    const store = openSqliteStore(file);
    store.findKey((round % 5).toString(16).padStart(64, '0'), new Date().toISOString());
    store.cancelOrder(1);
    await store.close();
    for (let i = 0; i < 5; i += 1) vm.createContext({});
  }
  globalThis.gc();
  process.stdout.write('done\\n');
})().catch((err) => {
  process.stderr.write(String(err && err.stack) + '\\n');
  process.exit(1);
});
`;

test('a process that used SQLite stores exits 0 after their statements are collected, in a new vm context and by a forced GC', () => {
  const tmp = tempDir();
  try {
    const child = spawnSync(process.execPath, ['--expose-gc', '-e', CHILD, path.join(tmp.dir, 'teardown.db')], {
      encoding: 'utf8',
      timeout: 30000,
    });

    expect({ status: child.status, signal: child.signal, stderr: child.stderr }).toEqual({ status: 0, signal: null, stderr: '' });
    expect(child.stdout).toBe('done\n');
  } finally {
    tmp.cleanup();
  }
});
