import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { checkProject, readDocument } from '../../src/contract/compat/project';
import { SPEC_PATH } from '../../src/contract/document';
import { listen } from '../helpers/app';
import { cliAsync } from '../helpers/cli';
import { tempDir } from '../helpers/temp-dir';
import { openSqliteStore } from '../../src/store';

// `petstore-orders compat`, as CI runs it on this project and as a consumer runs it on a deployment.
const tmp = tempDir();
afterAll(tmp.cleanup);
const releasedDir = path.join(path.dirname(SPEC_PATH), 'released');
const released = path.join(releasedDir, '1.0.2.yaml');

/** A copy of the released v1 document with `edit` applied, written to a file. */
function editedFile(name: string, edit: (doc: ReturnType<typeof readDocument>) => void): string {
  const doc = readDocument(released);
  edit(doc);
  const file = path.join(tmp.dir, name);
  fs.writeFileSync(file, stringify(doc));
  return file;
}

test('on this project: v1, v2 and v3 match their latest releases, 1.0.2, 2.1.2 and 3.2.0: the check passes', async () => {
  const result = await cliAsync(['compat']);

  expect(result.stdout).toBe(
    'spec/openapi.yaml (1.0.2) against spec/released/1.0.2.yaml (1.0.2): no changes\n' +
      'spec/openapi-v2.yaml (2.1.2) against spec/released/2.1.2.yaml (2.1.2): no changes\n' +
      'spec/openapi-v3.yaml (3.2.0) against spec/released/3.2.0.yaml (3.2.0): no changes\n',
  );
  expect(result.status).toBe(0);
});

test("a consumer's pinned document against a deployment's /v1/openapi.json: no breaking change, exit 0", async () => {
  const store = openSqliteStore(path.join(tmp.dir, 'served.db'));
  const server = await listen({ store });
  try {
    const result = await cliAsync(['compat', '--base', released, '--head', `${server.url}/v1/openapi.json`]);

    expect(result.stdout).toBe('0 breaking, 0 additive, 0 docs-only change(s)\n');
    expect(result.status).toBe(0);
  } finally {
    await server.close();
    await store.close();
  }
});

/** `compat --json` between two releases of spec/released: its exit status and its report. */
async function releasesCompared(from: string, to: string) {
  const result = await cliAsync([
    'compat',
    '--base',
    path.join(releasedDir, `${from}.yaml`),
    '--head',
    path.join(releasedDir, `${to}.yaml`),
    '--json',
  ]);
  const report = JSON.parse(result.stdout) as { breaking: boolean; findings: Array<{ class: string; rule: string; pointer: string }> };
  return { status: result.status, report };
}

/** The pointer of the 503's description under each operation, as the check reports it. */
const serviceUnavailable = (...operations: string[]) => operations.map((operation) => `/paths/${operation}/responses/503/description`);

test.each([
  ['v1', '1.0.0', '1.0.1', serviceUnavailable('~1store~1orders/get', '~1store~1orders~1{orderId}/delete', '~1pets~1{petId}/get')],
  [
    'v2',
    '2.1.0',
    '2.1.1',
    serviceUnavailable(
      '~1store~1orders/get',
      '~1store~1orders~1{orderId}/get',
      '~1store~1orders~1{orderId}/delete',
      '~1store~1order-events/get',
    ),
  ],
])("%s's %s to %s, the 503's words, is docs-only: a patch release", async (_version, from, to, pointers) => {
  const { status, report } = await releasesCompared(from, to);
  expect(status).toBe(0);
  expect(report.breaking).toBe(false);
  expect(report.findings.map((finding) => [finding.class, finding.pointer])).toEqual(
    ['/info/description', ...pointers].map((pointer) => ['docs', pointer]),
  );
});

test.each([
  ['v1', '1.0.1', '1.0.2', ['~1store~1orders/get', '~1store~1orders~1{orderId}/delete', '~1pets~1{petId}/get']],
  [
    'v2',
    '2.1.1',
    '2.1.2',
    ['~1store~1orders/get', '~1store~1orders~1{orderId}/get', '~1store~1orders~1{orderId}/delete', '~1store~1order-events/get'],
  ],
])("%s's %s to %s, each operation's scopes declared, is docs-only: a patch release", async (_version, from, to, operations) => {
  const { status, report } = await releasesCompared(from, to);
  expect(status).toBe(0);
  expect(report.findings.filter((finding) => finding.class !== 'docs')).toEqual([]);
  expect(report.findings.filter((finding) => finding.rule === 'operation-scopes-declared').map((finding) => finding.pointer)).toEqual(
    operations.map((operation) => `/paths/${operation}/x-scopes`),
  );
});

test('a breaking change exits 1 and names the pointer and the rule, one line each', async () => {
  const head = editedFile('no-409.yaml', (doc) => delete doc.paths['/store/orders/{orderId}']!.delete!.responses['409']);

  const result = await cliAsync(['compat', '--base', released, '--head', head]);

  expect(result.status).toBe(1);
  expect(result.stdout).toContain('breaking  response-status-removed  /paths/~1store~1orders~1{orderId}/delete/responses/409  ');
  expect(result.stdout).toMatch(/^1 breaking, 0 additive, 0 docs-only change\(s\)$/m);
});

test('--json gives the findings to machines', async () => {
  const head = editedFile('described.yaml', (doc) => (doc.info.description = 'Orders.'));

  const result = await cliAsync(['compat', '--base', released, '--head', head, '--json']);

  expect(result.status).toBe(0);
  expect(JSON.parse(result.stdout)).toEqual({
    breaking: false,
    findings: [{ class: 'docs', rule: 'docs-changed', pointer: '/info/description', message: expect.any(String) }],
  });
});

test.each([
  ['--base without --head', ['--base', 'x.yaml'], '--base and --head go together'],
  ['an unreadable file', ['--base', '/nonexistent.yaml', '--head', 'x'], '--base: cannot read /nonexistent.yaml'],
  [
    'a file that is not an OpenAPI document',
    ['--base', 'package.json', '--head', 'package.json'],
    '--base: package.json is not an OpenAPI document',
  ],
])('%s is a clear error', async (_case, args, message) => {
  const result = await cliAsync(['compat', ...args]);

  expect(result.status).toBe(1);
  expect(result.stderr).toContain(message);
});

describe('checkProject', () => {
  /** A copy of spec/ and CHANGELOG.md whose working document is edited. */
  function projectWith(name: string, edit: (doc: ReturnType<typeof readDocument>) => void, changelog?: string): string {
    const root = path.join(tmp.dir, name);
    fs.cpSync(path.dirname(SPEC_PATH), path.join(root, 'spec'), { recursive: true });
    fs.writeFileSync(
      path.join(root, 'CHANGELOG.md'),
      changelog ?? fs.readFileSync(path.join(path.dirname(SPEC_PATH), '..', 'CHANGELOG.md')),
    );
    const working = path.join(root, 'spec', 'openapi.yaml');
    const doc = readDocument(working);
    edit(doc);
    fs.writeFileSync(working, stringify(doc));
    return path.join(root, 'spec');
  }

  test('a working document with a breaking change fails against its release', () => {
    const spec = projectWith('breaking', (doc) => delete doc.paths['/store/orders']);

    const [check] = checkProject(new Date(), spec);

    expect(check!.release).toBe('spec/released/1.0.2.yaml');
    expect(check!.report!.problems).toContainEqual(expect.stringContaining('1 breaking change to 1.0.2'));
  });

  test('an additive change passes with a minor bump and its changelog section', () => {
    const spec = projectWith(
      'additive',
      (doc) => {
        doc.info.version = '1.1.0';
        doc.paths['/store/orders']!.get!.parameters!.push({ name: 'status', in: 'query', schema: { type: 'string' } });
      },
      '# Changelog\n\n## 1.1.0 (2026-12-01)\n\n- `status` filter.\n\n## 1.0.2 (2026-11-26)\n\n## 1.0.1 (2026-11-25)\n\n## 1.0.0 (2026-11-22)\n',
    );

    const [check] = checkProject(new Date(), spec);

    expect(check!.report!.findings.map((f) => f.rule)).toEqual(['request-parameter-added']);
    expect(check!.report!.problems).toEqual([]);
  });

  test('a major version with no release yet has nothing frozen', () => {
    const spec = projectWith('next-major', (doc) => (doc.info.version = '9.0.0'));

    expect(checkProject(new Date(), spec)).toContainEqual({ document: 'spec/openapi.yaml', release: null, report: null });
  });
});

describe("v2's 2.1.0 against 2.0.0, as it was before 2.1.0 was released", () => {
  /**
   * A copy of spec/ and CHANGELOG.md as they were before 2.1.0 was released: the working v2 document
   * is 2.1.0 as released, its version and the changelog edited.
   */
  function before21(name: string, version: string, changelog: (text: string) => string): string {
    const root = path.join(tmp.dir, name);
    fs.cpSync(path.dirname(SPEC_PATH), path.join(root, 'spec'), { recursive: true });
    const working = path.join(root, 'spec', 'openapi-v2.yaml');
    fs.copyFileSync(path.join(root, 'spec', 'released', '2.1.0.yaml'), working);
    for (const later of ['2.1.0', '2.1.1', '2.1.2']) fs.rmSync(path.join(root, 'spec', 'released', `${later}.yaml`));
    fs.writeFileSync(working, fs.readFileSync(working, 'utf8').replace(/^( {2}version: )2\.1\.0$/m, `$1${version}`));
    const text = fs.readFileSync(path.join(path.dirname(SPEC_PATH), '..', 'CHANGELOG.md'), 'utf8');
    fs.writeFileSync(path.join(root, 'CHANGELOG.md'), changelog(text));
    return path.join(root, 'spec');
  }
  const v2 = (spec: string) => checkProject(new Date(), spec).find((check) => check.document === 'spec/openapi-v2.yaml')!;
  const without21 = (text: string) => text.replace(/## 2\.1\.0 \([^)]*\)\n[\s\S]*?(?=\n## )/, '');

  test('is additive: both operations added, and Retry-After on 503; it passes with the minor bump and the changelog section', () => {
    const check = v2(before21('as-released', '2.1.0', (text) => text));

    expect(check.release).toBe('spec/released/2.0.0.yaml');
    expect(check.report!.findings.filter((f) => f.class === 'additive').map((f) => f.pointer)).toEqual([
      '/paths/~1store~1orders/get/responses/503/headers',
      '/paths/~1store~1orders~1{orderId}/delete/responses/503/headers',
      '/paths/~1store~1orders~1{orderId}/get',
      '/paths/~1store~1order-events/get',
    ]);
    expect(check.report!.findings.filter((f) => f.class === 'breaking')).toEqual([]);
    expect(check.report!.problems).toEqual([]);
  });

  test('fails without the bump, and without the changelog section', () => {
    expect(v2(before21('no-bump', '2.0.0', (text) => text)).report!.problems).toEqual([
      'additive changes need a minor version bump: info.version is 2.0.0, and must be at least 2.1.0',
    ]);
    expect(v2(before21('no-section', '2.1.0', without21)).report!.problems).toEqual([
      'CHANGELOG.md has no section for 2.1.0 ("## 2.1.0 (date)"): additive changes are announced there',
    ]);
  });
});

describe("v3's open Error.code set, on a copy of the project", () => {
  /** A copy of spec/ and CHANGELOG.md whose working v3 document has its known codes edited. */
  function v3With(name: string, version: string, codes: (known: string[]) => string[], changelog = (text: string) => text) {
    const root = path.join(tmp.dir, name);
    fs.cpSync(path.dirname(SPEC_PATH), path.join(root, 'spec'), { recursive: true });
    const working = path.join(root, 'spec', 'openapi-v3.yaml');
    const doc = readDocument(working);
    doc.info.version = version;
    const code = (doc.components!.schemas!.Error as { properties: { code: Record<string, string[]> } }).properties.code;
    code['x-extensible-enum'] = codes(code['x-extensible-enum']!);
    fs.writeFileSync(working, stringify(doc));
    const text = fs.readFileSync(path.join(path.dirname(SPEC_PATH), '..', 'CHANGELOG.md'), 'utf8');
    fs.writeFileSync(path.join(root, 'CHANGELOG.md'), changelog(text));
    return checkProject(new Date(), path.join(root, 'spec')).find((check) => check.document === 'spec/openapi-v3.yaml')!;
  }
  // The next minor version after the working document's, with its changelog section.
  const current = readDocument(path.join(path.dirname(SPEC_PATH), 'openapi-v3.yaml')).info.version;
  const next = `3.${Number(current.split('.')[1]) + 1}.0`;
  const withNext = (text: string) => text.replace(`## ${current} (`, `## ${next} (2026-12-01)\n\n- A new code.\n\n## ${current} (`);

  test('3.0.0 was a new major: before its release, nothing of v3 was frozen', () => {
    const root = path.join(tmp.dir, 'before-3');
    fs.cpSync(path.dirname(SPEC_PATH), path.join(root, 'spec'), { recursive: true });
    for (const name of fs.readdirSync(path.join(root, 'spec', 'released')).filter((file) => file.startsWith('3.'))) {
      fs.rmSync(path.join(root, 'spec', 'released', name));
    }
    fs.copyFileSync(path.join(path.dirname(SPEC_PATH), '..', 'CHANGELOG.md'), path.join(root, 'CHANGELOG.md'));

    expect(checkProject(new Date(), path.join(root, 'spec'))).toContainEqual({
      document: 'spec/openapi-v3.yaml',
      release: null,
      report: null,
    });
  });

  test('3.1.0 against 3.0.0, as before 3.1.0 was released: additive, passing with its minor bump and changelog section', () => {
    const root = path.join(tmp.dir, 'before-3.1');
    fs.cpSync(path.dirname(SPEC_PATH), path.join(root, 'spec'), { recursive: true });
    fs.copyFileSync(path.join(root, 'spec', 'released', '3.1.0.yaml'), path.join(root, 'spec', 'openapi-v3.yaml'));
    // Before 3.1.0 was released, neither it nor the 3.1.x after it was.
    for (const later of ['3.1.0.yaml', '3.1.1.yaml', '3.2.0.yaml']) fs.rmSync(path.join(root, 'spec', 'released', later));
    fs.copyFileSync(path.join(path.dirname(SPEC_PATH), '..', 'CHANGELOG.md'), path.join(root, 'CHANGELOG.md'));

    const check = checkProject(new Date(), path.join(root, 'spec')).find((each) => each.document === 'spec/openapi-v3.yaml')!;

    expect(check.release).toBe('spec/released/3.0.0.yaml');
    expect(check.report!.findings.filter((f) => f.class === 'breaking')).toEqual([]);
    expect(new Set(check.report!.findings.filter((f) => f.class === 'additive').map((f) => f.rule))).toEqual(
      new Set(['operation-added', 'open-enum-value-added']),
    );
    expect(check.report!.problems).toEqual([]);
  });

  test('3.2.0 against 3.1.1, as before 3.2.0 was released: its endpoint operations and webhooks additive, its tag docs', () => {
    const root = path.join(tmp.dir, 'before-3.2');
    fs.cpSync(path.dirname(SPEC_PATH), path.join(root, 'spec'), { recursive: true });
    fs.rmSync(path.join(root, 'spec', 'released', '3.2.0.yaml'));
    fs.copyFileSync(path.join(path.dirname(SPEC_PATH), '..', 'CHANGELOG.md'), path.join(root, 'CHANGELOG.md'));

    const check = checkProject(new Date(), path.join(root, 'spec')).find((each) => each.document === 'spec/openapi-v3.yaml')!;

    expect(check.release).toBe('spec/released/3.1.1.yaml');
    expect(check.report!.findings.filter((f) => f.class === 'breaking')).toEqual([]);
    expect(new Set(check.report!.findings.map((f) => f.rule))).toEqual(
      new Set(['docs-changed', 'tags-changed', 'operation-added', 'webhook-added', 'open-enum-value-added']),
    );
    expect(check.report!.problems).toEqual([]);
  });

  test('a code added to the open set is additive: it passes with a minor bump and a changelog section', () => {
    const check = v3With('code-added', next, (known) => [...known.slice(0, 3), 'new_code', ...known.slice(3)], withNext);

    const rules = new Set(check.report!.findings.map((f) => `${f.class} ${f.rule} ${f.message}`));
    expect([...rules]).toEqual(['additive open-enum-value-added "new_code" added to an open set']);
    expect(check.report!.problems).toEqual([]);
    expect(v3With('code-added-no-bump', current, (known) => [...known, 'new_code']).report!.problems).toEqual([
      `additive changes need a minor version bump: info.version is ${current}, and must be at least ${next}`,
    ]);
  });

  test('a code removed from it is breaking; the same codes in another order change nothing', () => {
    const removed = v3With('code-removed', next, (known) => known.filter((code) => code !== 'rate_limited'), withNext);
    const reordered = v3With('codes-reordered', current, (known) => [...known].reverse());

    expect(new Set(removed.report!.findings.map((f) => `${f.class} ${f.rule} ${f.message}`))).toEqual(
      new Set(['breaking open-enum-value-removed "rate_limited" removed from an open set']),
    );
    expect(removed.report!.problems).toContainEqual(expect.stringContaining('breaking change'));
    expect(reordered.report!.findings).toEqual([]);
  });
});

test('a release the changelog does not announce fails the project check', () => {
  const root = path.join(tmp.dir, 'unannounced');
  fs.cpSync(path.dirname(SPEC_PATH), path.join(root, 'spec'), { recursive: true });
  fs.writeFileSync(path.join(root, 'CHANGELOG.md'), '# Changelog\n');

  const [check] = checkProject(new Date(), path.join(root, 'spec'));

  expect(check!.report!.problems).toEqual([
    'CHANGELOG.md has no section for the released 1.0.0 (spec/released/1.0.0.yaml)',
    'CHANGELOG.md has no section for the released 1.0.1 (spec/released/1.0.1.yaml)',
    'CHANGELOG.md has no section for the released 1.0.2 (spec/released/1.0.2.yaml)',
  ]);
});
