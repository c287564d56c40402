import path from 'node:path';
import { openSqliteStore } from '../../src/store';
import { cli } from '../helpers/cli';
import { tempDir } from '../helpers/temp-dir';

// The operator's webhook commands, on a SQLite file: add, list, enable, remove, deliveries and
// replay, and a clear error naming what is wrong. Loopback addresses only.
const tmp = tempDir();
afterAll(tmp.cleanup);

test('an operator makes, lists, enables, reads the log of, replays and removes a webhook endpoint', async () => {
  const db = path.join(tmp.dir, 'hooks.db');
  const local = { env: { PETSTORE_WEBHOOK_ALLOW_HTTP: 'true', PETSTORE_WEBHOOK_ALLOW_PRIVATE: 'true' } };

  const added = cli(
    ['--db', db, 'webhooks', 'add', 'http://127.0.0.1:9/hooks', '--events', 'order.created, order.shipped', '--description', 'fulfilment'],
    local,
  );
  expect(added.stderr).toBe('');
  expect(added.status).toBe(0);
  const [, id, secret] = /^id: (we_\w+)\nsecret: (whsec_\S+)\n$/.exec(added.stdout) ?? [];
  expect(id).toBeDefined();
  expect(secret).toBeDefined();

  const listed = cli(['--db', db, 'webhooks', 'list']);
  expect(listed.stdout.split('\n')[0]).toBe('ID\tURL\tEVENTS\tSTATUS\tCREATED\tDESCRIPTION');
  expect(listed.stdout).toContain(`${id}\thttp://127.0.0.1:9/hooks\torder.created,order.shipped\tenabled\t`);
  expect(listed.stdout).not.toContain('whsec_');

  const store = openSqliteStore(db);
  try {
    await store.webhooks.updateEndpoint(id!, { status: 'disabled' });
    await store.webhooks.logAttempt(id!, {
      eventId: 'evt_3',
      attempt: 1,
      at: '2026-11-27T10:00:00.000Z',
      status: null,
      error: 'ECONNREFUSED',
      durationMs: 1.5,
      outcome: 'retrying',
    });
  } finally {
    await store.close();
  }
  expect(cli(['--db', db, 'webhooks', 'list']).stdout).toContain('\tdisabled (disabled by hand)\t');
  expect(cli(['--db', db, 'webhooks', 'enable', id!]).stdout).toBe(`enabled ${id}\n`);
  expect(cli(['--db', db, 'webhooks', 'list']).stdout).toContain('\tenabled\t');
  expect(cli(['--db', db, 'webhooks', 'deliveries', id!]).stdout).toBe(
    'AT\tEVENT\tATTEMPT\tANSWER\tOUTCOME\tMS\n2026-11-27T10:00:00.000Z\tevt_3\t1\tECONNREFUSED\tretrying\t1.5\n',
  );
  expect(cli(['--db', db, 'webhooks', 'replay', id!, '--since', '2026-01-01T00:00:00Z']).stdout).toBe(
    `0 event(s) will be sent again to ${id}\n`,
  );
  expect(cli(['--db', db, 'webhooks', 'remove', id!]).stdout).toBe(`removed ${id}\n`);
  expect(cli(['--db', db, 'webhooks', 'list']).stdout).toBe('ID\tURL\tEVENTS\tSTATUS\tCREATED\tDESCRIPTION\n');
});

test('a URL the rules refuse, an unknown event type, an unknown id and a bad date each get a message naming what is wrong, and change nothing', () => {
  const db = path.join(tmp.dir, 'refusals.db');
  const refused = (args: string[]) => {
    const result = cli(['--db', db, 'webhooks', ...args]);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    return result.stderr.trim();
  };
  expect(refused(['add', 'https://127.0.0.1/hooks'])).toBe(
    'petstore-orders: URL: 127.0.0.1 is a loopback address, not a public one (private addresses are not allowed)',
  );
  expect(refused(['add', 'http://127.0.0.1/hooks'])).toBe('petstore-orders: URL: must be https (the operator has not allowed http)');
  expect(refused(['add', 'https://localhost/hooks'])).toContain('local name');
  expect(refused(['add', 'https://hooks.example.com/', '--events', 'order.placed'])).toBe(
    'petstore-orders: --events: "order.placed" is not an event type (order.created, order.cancelled, order.shipped)',
  );
  expect(refused(['enable', 'we_none'])).toBe('petstore-orders: ID: no webhook endpoint has the id "we_none"');
  expect(refused(['remove', 'we_none'])).toBe('petstore-orders: ID: no webhook endpoint has the id "we_none"');
  expect(refused(['deliveries', 'we_none'])).toBe('petstore-orders: ID: no webhook endpoint has the id "we_none"');
  expect(refused(['deliveries', 'we_none', '--limit', '0'])).toBe('petstore-orders: --limit: a whole number from 1 to 1000, got "0"');
  expect(refused(['replay', 'we_none', '--since', 'yesterday'])).toBe(
    'petstore-orders: --since: an RFC 3339 date-time such as 2026-11-27T09:00:00Z, got "yesterday"',
  );
  expect(cli(['--db', db, 'webhooks', 'list']).stdout).toBe('ID\tURL\tEVENTS\tSTATUS\tCREATED\tDESCRIPTION\n');
});
