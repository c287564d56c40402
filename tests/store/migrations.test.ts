import { createHash } from 'node:crypto';
import type { Migration } from '../../src/store/migration';
import { shipDateRule } from '../../src/store/date-time-sql';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations';
import { postgresDialect } from '../../src/store/postgres/dialect';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations';
import { sqliteDialect } from '../../src/store/sqlite/dialect';

// A migration that has shipped is a record: stores have run it, and a new store runs it again as
// the first did. Each is held here to the digest of its version, name, SQL and refusal: editing a
// shipped migration fails this test; a schema change is a new migration, with a new row below.

/** The sha256 of what a migration runs. */
function digest(migration: Migration): string {
  const { version, name, sql, refuseWhile } = migration;
  return createHash('sha256')
    .update(JSON.stringify([version, name, sql, refuseWhile ?? null]))
    .digest('hex');
}

const SHIPPED = {
  sqlite: [
    [1, 'a00d5f7ceb7d0f279f9bb52dd7b1aa4f9b35a4089bf84880dac9d51a76131743'],
    [2, '924c9c9c283bff3c7aa4df343817df742319755525ddf01244eb9e21dec3e320'],
    [3, 'f0a311ce21d203ca45ea1b236f63bdd4707742c495ebbbcfb296a0c9d2ff7f8b'],
    [4, 'e812c068fabfd19d63517f078074187df8d2563ce7a259721ff20f4f0f1e604f'],
    [5, '074a8699980d486a6eff52acfb2df651fca0cf1f27ba521fa4b7eccae851b7b3'],
    [6, '5b91608eae89e728c6544e3c5b6862f613b74c2f897bf4b91d585982e010765a'],
    [7, 'ff1677560da0fcd5a078bba2727b303aba9df114df9ba85ef4b6974043a8465c'],
    [8, 'd2ffb65f59c66cd0989113242ab74991e95f2fb35294bd936d0a5f48e8b7d297'],
    [9, 'a1a6217ba4034ed35139e946991d4f422add9f9b82acf1a65f0f1d4a741329ab'],
    [10, '6acb397f32e781a76547ae7c4481ac747bc6edd5929239fb42c95d17b2f0e413'],
    [11, '1df6ae215b323d55d86772175aacb26c43accc5766d32dd9d51cdf58421bd646'],
    [12, '720a59e0af76871b8b56c61d6f973649c96edd2452768453b48b26b6930df4e5'],
    [13, 'dacd031fb499202861f4b2b1993fc35cc1f74610686366a378943546691f4d7e'],
  ],
  postgres: [
    [1, '34313b42355cbb9de2b0109659ef007ed8d07a7df4b1d7a94a931f21628c4a9b'],
    [2, '2523c1bd91e9673b0ae9b87fd151418eef6ab8970d835a4022364983c63e1c63'],
    [3, '563fb289f1a379caad3d60644e13612befe165911aecaa7e7bb80b78f5ada25b'],
    [4, 'd1ff0d0769a4a5185d48d20e627844342b70e5c2fc5023bd34cee33b22a33e55'],
    [5, '9c9818bfc4ea7ae2e77181b071cf4808659935d917630a2e4cdef4713a6d3f8b'],
    [6, '50232b525b659f9d88a670f670e93a6ef59870706747228a39cde1572546bc7d'],
    [7, 'c089d214277a1abf5b1b73cd8ca2fa4c5656776e3cdfab0c9be16737e90f4c59'],
    [8, 'cb252ac2179f7f242dc3c47cbbed3e6507c1db1826289a4a893061d1167b952e'],
    [9, '476d17ed3c47cef6cdfcd5cb3eae0a11df53a0b16f9e34d5aa6b68971bbdea38'],
    [10, 'a09783bbc5d6eb9904ced6ee3dd70d2001277412677bb9780d38c8eb1497a41a'],
    [11, 'e3fb3f86267242f24214c9a1567a1550b537ca4a1475c7ce765ea752698aa931'],
    [12, '79e4e91cb1726cf1e0fc1f3e2623bf62fb8e308ee0dc32c3f56330f4234479d5'],
    [13, 'f57dd47090e6c70677adb468bfae56e5470f1377ebfabe2328d227dd0f7dcc94'],
    [14, 'd268231d997621dcb9f7fd49941cd31b6912820fb3d307e955b445bf01b5d416'],
  ],
} as const;

describe.each([
  ['sqlite', SQLITE_MIGRATIONS, SHIPPED.sqlite],
  ['postgres', POSTGRES_MIGRATIONS, SHIPPED.postgres],
] as const)('the %s schema history', (_name, migrations, shipped) => {
  test.each(shipped.map(([version, sha]) => [version, sha]))('migration %i is exactly as it shipped', (version, sha) => {
    const migration = migrations.find((each) => each.version === version);

    expect(migration).toBeDefined();
    expect(digest(migration!)).toBe(sha);
  });

  test('every migration it has is recorded here', () => {
    expect(shipped.map(([version]) => version)).toEqual(migrations.map((migration) => migration.version));
  });

  test('its versions run 1, 2, 3, … with no gap', () => {
    expect(migrations.map((migration) => migration.version)).toEqual(migrations.map((_, i) => i + 1));
  });
});

// The latest ship date CHECK of each store is the rule shipDateRule spells, which
// tests/store/date-time-check.test.ts holds to the contract's validator.
test.each([
  ['sqlite', SQLITE_MIGRATIONS, `CONSTRAINT order_ship_date_rfc3339 CHECK ${shipDateRule('ship_date', sqliteDialect)}`],
  ['postgres', POSTGRES_MIGRATIONS, `ADD CONSTRAINT order_ship_date_rfc3339 CHECK ${shipDateRule('ship_date', postgresDialect)}`],
] as const)('the %s store checks ship dates with the rule the contract is tested against', (_name, migrations, check) => {
  const last = migrations.filter((migration) => migration.sql.includes('order_ship_date_rfc3339 CHECK')).at(-1);

  expect(last?.sql).toContain(check);
});
