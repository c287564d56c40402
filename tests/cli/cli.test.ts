import { execFileSync } from 'node:child_process';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { cli, serve, seedWithCli } from '../helpers/cli';
import { rowsOf } from '../helpers/stores';
import { tempDir } from '../helpers/temp-dir';

const tmp = tempDir();
afterAll(tmp.cleanup);

let db: string;
let n = 0;
beforeEach(() => {
  n += 1;
  db = path.join(tmp.dir, `cli-${n}`, 'petstore.db');
});

const good = { petId: 1, quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false };

function writeJson(name: string, value: unknown): string {
  const file = path.join(tmp.dir, `${n}-${name}`);
  fs.writeFileSync(file, JSON.stringify(value));
  return file;
}

/** One column of `keys list`, named by its heading, by key name. */
function listed(column: string): Record<string, string> {
  const [heading = '', ...rows] = cli(['--db', db, 'keys', 'list']).stdout.trim().split('\n');
  const at = heading.split('\t').indexOf(column);
  expect(at).toBeGreaterThan(0);
  return Object.fromEntries(rows.map((line) => line.split('\t')).map((cells) => [cells[0], cells[at] ?? '']));
}

describe('keys', () => {
  test('create prints the new key alone on stdout, and only its hash is stored', () => {
    const result = cli(['--db', db, 'keys', 'create', '--name', 'ci']);

    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^pso_[A-Za-z0-9_-]{43}\n$/);
    const key = result.stdout.trim();
    const bytes = Buffer.concat([db, `${db}-wal`].filter(fs.existsSync).map((f) => fs.readFileSync(f)));
    expect(bytes.includes(key)).toBe(false);
  });

  test('two keys are never the same', () => {
    const a = cli(['--db', db, 'keys', 'create', '--name', 'a']).stdout;
    const b = cli(['--db', db, 'keys', 'create', '--name', 'b']).stdout;

    expect(a).not.toBe(b);
  });

  test.each([
    ['a taken name', ['taken'], '--name: a key named "taken" already exists'],
    ['an empty name', [''], '--name must be 1 to 64 letters'],
    ['a name with spaces', ['my key'], '--name must be 1 to 64 letters'],
  ])('create refuses %s with a message naming --name', (_case, [name], message) => {
    cli(['--db', db, 'keys', 'create', '--name', 'taken']);

    const result = cli(['--db', db, 'keys', 'create', '--name', name!]);

    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(message);
  });

  test('list shows names and dates but never a key, and revoke marks a key revoked', () => {
    const key = cli(['--db', db, 'keys', 'create', '--name', 'ci']).stdout.trim();
    cli(['--db', db, 'keys', 'create', '--name', 'ops']);

    const revoke = cli(['--db', db, 'keys', 'revoke', 'ci']);
    const list = cli(['--db', db, 'keys', 'list']);

    expect(revoke.status).toBe(0);
    expect(list.status).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines[0]).toBe('NAME\tSCOPES\tRATE LIMIT\tCREATED\tEXPIRES\tREVOKED\tOLD KEY UNTIL');
    expect(lines[1]).toMatch(/^ci\torders:read,orders:cancel\tdefault\t\d{4}-\d\d-\d\dT[^\t]+\t-\t\d{4}-\d\d-\d\dT[^\t]+\t-$/);
    expect(lines[2]).toMatch(/^ops\torders:read,orders:cancel\tdefault\t\d{4}-\d\d-\d\dT[^\t]+\t-\t-\t-$/);
    expect(list.stdout).not.toContain(key);
  });

  test('a key made to expire shows its expiry, which update moves or removes', () => {
    const before = Date.now();
    expect(cli(['--db', db, 'keys', 'create', '--name', 'short', '--expires-in', '2h']).status).toBe(0);
    expect(cli(['--db', db, 'keys', 'create', '--name', 'dated', '--expires-at', '2999-01-01T01:00:00+01:00']).status).toBe(0);
    const expiries = () => listed('EXPIRES');

    const made = expiries();
    const inTwoHours = Date.parse(made.short ?? '') - before;
    expect(inTwoHours).toBeGreaterThanOrEqual(7_200_000);
    expect(inTwoHours).toBeLessThan(7_200_000 + 60_000);
    expect(made.dated).toBe('2999-01-01T00:00:00.000Z');

    const update = cli(['--db', db, 'keys', 'update', 'short', '--no-expiry']);
    expect(update.status).toBe(0);
    expect(update.stdout).toBe('updated short: no expiry\n');
    expect(cli(['--db', db, 'keys', 'update', 'dated', '--expires-at', '2998-06-01T00:00:00Z']).status).toBe(0);
    expect(expiries()).toEqual({ short: '-', dated: '2998-06-01T00:00:00.000Z' });
  });

  test("a key made with rate limits shows them, and update replaces them, removes them, or gives it the deployment's", () => {
    expect(cli(['--db', db, 'keys', 'create', '--name', 'partner', '--rate-limit', '600/min', '--rate-limit', '100000/day']).status).toBe(
      0,
    );
    expect(cli(['--db', db, 'keys', 'create', '--name', 'batch', '--rate-limit', 'none']).status).toBe(0);
    // A list, as PETSTORE_RATE_LIMIT takes it, gives the same policies as the option repeated.
    expect(cli(['--db', db, 'keys', 'create', '--name', 'listed', '--rate-limit', '600/min, 100000/day']).status).toBe(0);
    const limits = () => listed('RATE LIMIT');
    expect(limits()).toEqual({ partner: '600/min,100000/day', batch: 'none', listed: '600/min,100000/day' });

    const update = cli(['--db', db, 'keys', 'update', 'partner', '--rate-limit', '10/s']);
    expect(update.status).toBe(0);
    expect(update.stdout).toBe('updated partner: rate limit 10/s\n');
    expect(cli(['--db', db, 'keys', 'update', 'batch', '--rate-limit', 'default']).stdout).toBe('updated batch: rate limit default\n');
    expect(limits()).toEqual({ partner: '10/s', batch: 'default', listed: '600/min,100000/day' });
  });

  test('a key made with scopes shows them, and update replaces them', () => {
    expect(cli(['--db', db, 'keys', 'create', '--name', 'dashboard', '--scopes', 'orders:read']).status).toBe(0);
    expect(cli(['--db', db, 'keys', 'create', '--name', 'both', '--scopes', ' orders:cancel , orders:read,orders:cancel']).status).toBe(0);
    const scopes = () => listed('SCOPES');
    expect(scopes()).toEqual({ dashboard: 'orders:read', both: 'orders:cancel,orders:read' });

    const update = cli(['--db', db, 'keys', 'update', 'dashboard', '--scopes', 'orders:read,orders:cancel', '--expires-in', '1d']);
    expect(update.status).toBe(0);
    expect(update.stdout).toMatch(/^updated dashboard: scopes orders:read,orders:cancel; expires at \d{4}-/);
    expect(scopes()).toEqual({ dashboard: 'orders:read,orders:cancel', both: 'orders:cancel,orders:read' });
  });

  // One store for every refused command: each leaves its key list as it found it.
  let refusing: string;
  let listedBefore: string;
  beforeAll(() => {
    refusing = path.join(tmp.dir, 'refusing', 'petstore.db');
    cli(['--db', refusing, 'keys', 'create', '--name', 'existing', '--expires-in', '30d']);
    listedBefore = cli(['--db', refusing, 'keys', 'list']).stdout;
  });

  test.each([
    [
      ['create', '--name', 'k', '--expires-in', '3w'],
      '--expires-in must be a whole number of at least 1 with s, m, h or d (90d), got "3w"',
    ],
    [
      ['create', '--name', 'k', '--expires-in', '0d'],
      '--expires-in must be a whole number of at least 1 with s, m, h or d (90d), got "0d"',
    ],
    [
      ['create', '--name', 'k', '--expires-at', 'tomorrow'],
      '--expires-at must be an RFC 3339 date-time (2027-01-01T00:00:00Z), got "tomorrow"',
    ],
    [['create', '--name', 'k', '--expires-at', '2020-01-01T00:00:00Z'], '--expires-at must be in the future, got "2020-01-01T00:00:00Z"'],
    [
      ['create', '--name', 'k', '--expires-in', '1d', '--expires-at', '2999-01-01T00:00:00Z'],
      '--expires-in and --expires-at cannot be given together',
    ],
    [['update', 'existing', '--expires-in', '1y'], '--expires-in must be a whole number of at least 1 with s, m, h or d (90d), got "1y"'],
    [['update', 'existing', '--no-expiry', '--expires-in', '1d'], '--expires-in and --no-expiry cannot be given together'],
    [['update', 'existing'], 'nothing to change: give --scopes, --expires-in, --expires-at, --no-expiry or --rate-limit'],
    [
      ['create', '--name', 'k', '--rate-limit', '600/minute'],
      '--rate-limit must be N/UNIT, a whole number of at least 1 per s, min, h, day (600/min), or none, got "600/minute"',
    ],
    [['create', '--name', 'k', '--rate-limit', '0/s'], '--rate-limit must be N/UNIT, a whole number of at least 1'],
    [['create', '--name', 'k', '--rate-limit', '5/s', '--rate-limit', '9/s'], '--rate-limit gives two policies per s, got "9/s"'],
    [['update', 'existing', '--rate-limit', 'none', '--rate-limit', '5/s'], '--rate-limit none cannot be given with a policy'],
    [['update', 'existing', '--rate-limit', 'default', '--rate-limit', '5/s'], '--rate-limit default cannot be given with a policy'],
    [['update', 'nobody', '--rate-limit', '5/s'], 'NAME: no active key is named "nobody"'],
    [
      ['create', '--name', 'k', '--scopes', 'orders:read,orders:delete'],
      '--scopes: unknown scope "orders:delete"; the scopes are orders:read, orders:cancel',
    ],
    [['create', '--name', 'k', '--scopes', ''], '--scopes must name at least one scope (orders:read,orders:cancel,'],
    [['update', 'existing', '--scopes', 'orders:read,'], '--scopes has an empty scope (orders:read,orders:cancel,'],
    [['update', 'existing', '--scopes', 'orders:read,,orders:cancel'], 'between commas, got "orders:read,,orders:cancel"'],
    [['update', 'existing', '--rate-limit', '600/min,,100/day'], '--rate-limit has an empty policy between commas, got "600/min,,100/day"'],
    [['update', 'existing', '--scopes', 'admin', '--no-expiry'], '--scopes: unknown scope "admin"'],
    [['update', 'nobody', '--no-expiry'], 'NAME: no active key is named "nobody"'],
  ])('keys %j fails naming what is wrong, and changes nothing', (args, message) => {
    const result = cli(['--db', refusing, 'keys', ...args]);

    expect(result.status).toBe(1);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
    expect(listedBefore).toContain('existing');
    expect(cli(['--db', refusing, 'keys', 'list']).stdout).toBe(listedBefore);
  });

  test('rotate prints a new key for the same name, alone, and refuses a bad grace or an unknown name, changing nothing', () => {
    const old = cli(['--db', db, 'keys', 'create', '--name', 'ci']).stdout.trim();
    const listed = cli(['--db', db, 'keys', 'list']).stdout;

    const rotated = cli(['--db', db, 'keys', 'rotate', 'ci', '--grace', '1h']);
    expect(rotated.status).toBe(0);
    expect(rotated.stdout).toMatch(/^pso_[A-Za-z0-9_-]{43}\n$/);
    expect(rotated.stdout.trim()).not.toBe(old);
    // The list shows until when the old key still works, and nothing else changed.
    const after = cli(['--db', db, 'keys', 'list']).stdout;
    const graceEnd = after.trim().split('\n')[1]!.split('\t')[6]!;
    expect(Date.parse(graceEnd) - Date.now()).toBeGreaterThan(3_500_000);
    expect(after.replace(`\t${graceEnd}\n`, '\t-\n')).toBe(listed);

    const hashes = (): string => {
      const file = new Database(db, { readonly: true });
      try {
        return JSON.stringify(file.prepare('SELECT key_hash, previous_hash FROM api_keys').all());
      } finally {
        file.close();
      }
    };
    const before = hashes();
    for (const [args, message] of [
      [['rotate', 'ci', '--grace', 'a while'], '--grace must be a whole number with s, m, h or d (90d), got "a while"'],
      [['rotate', 'nobody'], 'NAME: no active key is named "nobody"'],
    ] as const) {
      const result = cli(['--db', db, 'keys', ...args]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(message);
      expect(result.stdout).toBe('');
    }
    expect(hashes()).toBe(before);
  });

  test('revoking an unknown or already revoked key fails', () => {
    cli(['--db', db, 'keys', 'create', '--name', 'ci']);
    cli(['--db', db, 'keys', 'revoke', 'ci']);

    expect(cli(['--db', db, 'keys', 'revoke', 'ci']).status).toBe(1);
    expect(cli(['--db', db, 'keys', 'revoke', 'nobody']).stderr).toContain('no active key is named "nobody"');
  });
});

describe('orders', () => {
  test('import reads a file, all or nothing', () => {
    const file = writeJson('orders.json', [
      { ...good, id: 1 },
      { ...good, id: 2, status: 'shipped', complete: true },
    ]);

    const result = cli(['--db', db, 'orders', 'import', file]);

    expect(result.status).toBe(0);
    expect(result.stdout).toBe('imported 2 orders\n');
    expect(rowsOf(db).map((r) => [r.id, r.status])).toEqual([
      [1, 'pending'],
      [2, 'shipped'],
    ]);
  });

  test('import reads stdin when the file is -', () => {
    const result = cli(['--db', db, 'orders', 'import', '-'], { input: JSON.stringify([good]) });

    expect(result.status).toBe(0);
    expect(result.stdout).toBe('imported 1 order\n');
  });

  test('a bad record fails the import, naming its index and field, and nothing is written', () => {
    const file = writeJson('bad.json', [good, good, { ...good, shipDate: 'soon' }]);

    const result = cli(['--db', db, 'orders', 'import', file]);

    expect(result.status).toBe(1);
    expect(result.stderr).toBe('petstore-orders: record 2: shipDate must match format "date-time"; nothing was imported\n');
    expect(rowsOf(db)).toEqual([]);
  });

  test.each([
    [
      'a shipped order that is not complete',
      { status: 'shipped', complete: false },
      'record 1: complete must be true when status is "shipped"',
    ],
    ['a complete order that is not shipped', { complete: true }, 'record 1: complete must be false unless status is "shipped"'],
    [
      'a complete order marked pending',
      { status: 'pending', complete: true },
      'record 1: complete must be false unless status is "shipped"',
    ],
  ])('import refuses %s, naming the field, and writes nothing', (_case, fields, message) => {
    const file = writeJson('contradiction.json', [good, { ...good, ...fields }]);

    const result = cli(['--db', db, 'orders', 'import', file]);

    expect(result.status).toBe(1);
    expect(result.stderr).toBe(`petstore-orders: ${message}; nothing was imported\n`);
    expect(rowsOf(db)).toEqual([]);
  });

  test('a missing file fails with a message naming it', () => {
    const result = cli(['--db', db, 'orders', 'import', path.join(tmp.dir, 'absent.json')]);

    expect(result.status).toBe(1);
    expect(result.stderr).toContain('FILE: cannot read');
  });

  test.each([
    ['a pending order ships, and is complete', 'pending', 'order 1 shipped\n'],
    ['a shipped order stays shipped', 'shipped', 'order 1 had already shipped; nothing changed\n'],
  ])('ship: %s', (_case, status, stdout) => {
    cli(['--db', db, 'orders', 'import', '-'], { input: JSON.stringify([{ ...good, id: 1, status, complete: status === 'shipped' }]) });

    const result = cli(['--db', db, 'orders', 'ship', '1']);

    expect(result.status).toBe(0);
    expect(result.stdout).toBe(stdout);
    expect(rowsOf(db)[0]).toMatchObject({ status: 'shipped', complete: 1 });
  });

  test.each([
    ['an unknown order', '9', 'ID: order 9 was not found'],
    ['a malformed id', '1.0', 'ID must be the plain decimal form'],
    ['an unsafe id', '9007199254740993', 'ID must be the plain decimal form'],
  ])('ship refuses %s', (_case, id, message) => {
    cli(['--db', db, 'orders', 'import', '-'], { input: JSON.stringify([{ ...good, id: 1 }]) });

    const result = cli(['--db', db, 'orders', 'ship', id]);

    expect(result.status).toBe(1);
    expect(result.stderr).toContain(message);
    expect(rowsOf(db)[0]!.status).toBe('pending');
  });
});

describe('choosing the database', () => {
  test('PETSTORE_DB selects the file when --db is absent, and --db wins over it', () => {
    const fromEnv = path.join(tmp.dir, `env-${n}.db`);

    cli(['keys', 'create', '--name', 'env'], { env: { PETSTORE_DB: fromEnv } });
    cli(['--db', db, 'keys', 'create', '--name', 'flag'], { env: { PETSTORE_DB: fromEnv } });

    expect(cli(['keys', 'list'], { env: { PETSTORE_DB: fromEnv } }).stdout).toMatch(/^env\t/m);
    expect(cli(['--db', db, 'keys', 'list']).stdout).toMatch(/^flag\t/m);
    expect(cli(['--db', db, 'keys', 'list']).stdout).not.toMatch(/^env\t/m);
  });

  test('a bad environment value is refused, naming the variable', () => {
    const result = cli(['--db', db, 'keys', 'list'], { env: { LOG_LEVEL: 'loud' } });

    expect(result.status).toBe(1);
    expect(result.stderr).toContain('LOG_LEVEL must be one of');
  });

  test('an unknown command prints usage and fails', () => {
    const result = cli(['frobnicate']);

    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("unknown command 'frobnicate'");
  });
});

describe('serve', () => {
  test('serves the API with a key made by the CLI, and exits 0 on SIGTERM', async () => {
    const key = cli(['--db', db, 'keys', 'create', '--name', 'ci']).stdout.trim();
    cli(['--db', db, 'orders', 'import', '-'], { input: JSON.stringify([{ ...good, id: 1 }]) });
    const server = await serve(db);

    const list = await fetch(`${server.url}/v1/store/orders`, { headers: { Authorization: `Bearer ${key}` } });
    const cancel = await fetch(`${server.url}/v1/store/orders/1`, { method: 'DELETE', headers: { Authorization: `Bearer ${key}` } });
    server.child.kill('SIGTERM');

    expect(list.status).toBe(200);
    expect(await list.json()).toEqual([{ ...good, id: 1 }]);
    expect(cancel.status).toBe(204);
    await expect(server.exited).resolves.toBe(0);
    expect(rowsOf(db)[0]!.status).toBe('cancelled');
    // The V8 flags serve sets for itself, named where it says it is listening.
    expect(server.stderr()).toContain('"v8Flags":["--no-allocation-site-pretenuring"]');
  });

  test('instances started with PETSTORE_REUSE_PORT share one port, and the kernel gives each new connections', async () => {
    const shared = { PETSTORE_REUSE_PORT: 'true' };
    const first = await serve(db, [], shared);
    const port = new URL(first.url).port;
    const second = await serve(db, ['--port', port], shared);
    try {
      // Each request on a connection of its own, so that the kernel chooses an instance for each.
      const statuses = await Promise.all(
        Array.from(
          { length: 40 },
          () =>
            new Promise<number | undefined>((resolve, reject) => {
              http
                .get(`${first.url}/readyz`, { agent: false }, (res) => res.resume().on('end', () => resolve(res.statusCode)))
                .on('error', reject);
            }),
        ),
      );
      expect(statuses).toEqual(Array.from({ length: 40 }, () => 200));
      // Both answered some of them: each logs the requests it answered.
      for (const server of [first, second]) await server.printed(/"path":"\/readyz"/);
      expect(second.url).toBe(first.url);
    } finally {
      for (const server of [first, second]) server.child.kill('SIGTERM');
      await Promise.all([first.exited, second.exited]);
    }
  });

  test('a second instance on a port in use, without PETSTORE_REUSE_PORT, exits non-zero saying so', async () => {
    const first = await serve(db);
    try {
      const port = new URL(first.url).port;
      const second = cli(['--db', db, 'serve', '--port', port]);
      expect(second.status).not.toBe(0);
      expect(second.stderr).toContain('EADDRINUSE');
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  });

  test('--demo on a port in use exits non-zero and makes no key, so the next start prints one', async () => {
    const busy = path.join(tmp.dir, `busy-${n}.db`);
    const first = await serve(busy);
    try {
      const port = new URL(first.url).port;

      const refused = cli(['--db', db, 'serve', '--demo', '--port', port]);

      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toContain('EADDRINUSE');
      expect(refused.stdout).not.toContain('pso_');
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
    const next = await serve(db, ['--demo']);
    await next.printed('API reference', 'stdout');
    next.child.kill('SIGTERM');
    await next.exited;
    expect(next.stdout()).toMatch(/Demo API key.*: pso_/);
  });

  test('every cancel answered 204 survives a SIGKILL of the server', async () => {
    const key = cli(['--db', db, 'keys', 'create', '--name', 'ci']).stdout.trim();
    const ids = Array.from({ length: 20 }, (_, i) => i + 1);
    cli(['--db', db, 'orders', 'import', '-'], { input: JSON.stringify(ids.map((id) => ({ ...good, id }))) });
    const server = await serve(db);

    const statuses = await Promise.all(
      ids.map((id) =>
        fetch(`${server.url}/v1/store/orders/${id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${key}` } }).then(
          (res) => res.status,
        ),
      ),
    );
    server.child.kill('SIGKILL');
    await server.exited;

    expect(statuses).toEqual(ids.map(() => 204));
    expect(rowsOf(db).map((r) => r.status)).toEqual(ids.map(() => 'cancelled'));
  });

  test('a request in flight when SIGINT arrives still completes', async () => {
    const key = seedWithCli(db, 'ci', 5000);
    const server = await serve(db);

    // The response has begun (its head has arrived), so the request is in flight: a list of five
    // chunks, streamed, whose body is read only after the signal.
    const res = await fetch(`${server.url}/v1/store/orders`, {
      headers: { Authorization: `Bearer ${key}`, 'Accept-Encoding': 'identity' },
    });
    server.child.kill('SIGINT');
    const body = (await res.json()) as unknown[];

    expect(res.status).toBe(200);
    expect(body).toHaveLength(5000);
    await expect(server.exited).resolves.toBe(0);
  });

  test('--demo seeds an empty store and prints a key with every scope, and a v3 curl line that works pasted into a shell; later runs print no key', async () => {
    const first = await serve(db, ['--demo']);
    await first.printed('API reference', 'stdout');
    try {
      const banner = first.stdout();
      const lines = banner.split('\n').filter((line) => line.trimStart().startsWith('curl '));

      expect(banner).toContain(`at ${first.url}\n`);
      expect(banner).toContain(`API reference: ${first.url}/docs `);
      expect(lines).toEqual([expect.stringContaining(`'${first.url}/v3/store/orders?status=pending&limit=2'`)]);
      // As someone new would: the line pasted into a shell as it is printed.
      const output = execFileSync('sh', ['-c', `${lines[0]} --silent --show-error`], { encoding: 'utf8' });
      const [head = '', body = ''] = output.split('\r\n\r\n');
      expect(head.split(' ')[1]).toBe('200');
      expect(head).toContain('RateLimit-Policy: "min";q=600;w=60, "day";q=100000;w=86400');
      expect(JSON.parse(body)).toMatchObject({ orders: [{ status: 'pending' }, { status: 'pending' }] });
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
    expect(listed('SCOPES')).toEqual({ demo: 'orders:read,orders:cancel,orders:place,orders:ship,webhooks:manage' });
    expect(listed('RATE LIMIT')).toEqual({ demo: '600/min,100000/day' });

    // Run through scripts/with-node.sh, the command it suggests starts with it.
    const second = await serve(db, ['--demo'], { PETSTORE_NODE_LINE: '24' });
    await second.printed('API reference', 'stdout');
    second.child.kill('SIGTERM');
    await second.exited;
    expect(second.stdout()).not.toContain('pso_');
    expect(second.stdout()).toContain('cannot be shown again');
    expect(second.stdout()).toContain(
      'Make another with: scripts/with-node.sh 24 bin/petstore-orders keys create --name you --scopes orders:read,orders:cancel,orders:place,orders:ship,webhooks:manage\n',
    );
  });

  test('with NODE_ENV=production, --demo invents nothing', async () => {
    const server = await serve(db, ['--demo'], { NODE_ENV: 'production' });
    server.child.kill('SIGTERM');
    await server.exited;

    expect(server.stdout()).not.toContain('pso_');
    expect(cli(['--db', db, 'keys', 'list']).stdout).toBe('NAME\tSCOPES\tRATE LIMIT\tCREATED\tEXPIRES\tREVOKED\tOLD KEY UNTIL\n');
    expect(rowsOf(db)).toEqual([]);
  });
});
