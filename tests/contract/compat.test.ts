import path from 'node:path';
import type { OpenAPIV3 } from 'openapi-types';
import { checkRelease, compareDocuments } from '../../src/contract/compat/compare';
import { readDocument } from '../../src/contract/compat/project';
import { cloneDocument, SPEC_PATH } from '../../src/contract/document';
import { documentWithNotes } from '../helpers/documents';

// Every edit is made to a copy of the v1 document as first released, 1.0.0, and compared with it.
const released = readDocument(path.join(path.dirname(SPEC_PATH), 'released', '1.0.0.yaml'));
const BEFORE_SUNSET = new Date('2027-01-01T00:00:00Z');
const AFTER_SUNSET = new Date('2027-07-01T00:00:00Z');

type Doc = OpenAPIV3.Document;
type Schema = OpenAPIV3.SchemaObject;
const schemas = (doc: Doc) => doc.components!.schemas as Record<string, Schema>;
const order = (doc: Doc) => schemas(doc).Order!;
const listOrders = (doc: Doc) => doc.paths['/store/orders']!.get!;
const cancelOrder = (doc: Doc) => doc.paths['/store/orders/{orderId}']!.delete!;
/** The scopes an operation declares (its x-scopes), to edit. */
const scoped = (operation: OpenAPIV3.OperationObject) => operation as OpenAPIV3.OperationObject & { 'x-scopes'?: string[] };
/** The request body's schema, on its own: documentWithNotes shares it with the 201 response, and a copy keeps the sharing. */
const noteBody = (doc: Doc): Schema => {
  const media = (doc.paths['/notes']!.post!.requestBody as OpenAPIV3.RequestBodyObject).content['application/json']!;
  const response = (doc.paths['/notes']!.post!.responses['201'] as OpenAPIV3.ResponseObject).content!['application/json']!;
  if (media.schema === response.schema) media.schema = structuredClone(media.schema);
  return media.schema as Schema;
};

function edited(edit: (doc: Doc) => void, from: Doc = released): Doc {
  const doc = cloneDocument(from);
  edit(doc);
  return doc;
}

/** given: an edit of the released document; want: the class and rule of its findings. */
const cases: Array<[string, (doc: Doc) => void, 'breaking' | 'additive' | 'docs', string]> = [
  ['a removed operation', (d) => delete d.paths['/store/orders/{orderId}']!.delete, 'breaking', 'operation-removed'],
  ['a removed path', (d) => delete d.paths['/store/orders/{orderId}'], 'breaking', 'operation-removed'],
  ['a removed response status', (d) => delete cancelOrder(d).responses['409'], 'breaking', 'response-status-removed'],
  [
    'an Order field removed',
    (d) => {
      delete order(d).properties!.complete;
      order(d).required = order(d).required!.filter((name) => name !== 'complete');
    },
    'breaking',
    'response-field-removed',
  ],
  [
    'an Order field made optional',
    (d) => (order(d).required = order(d).required!.filter((name) => name !== 'complete')),
    'breaking',
    'response-field-made-optional',
  ],
  ['a changed format', (d) => ((order(d).properties!.shipDate as Schema).format = 'date'), 'breaking', 'response-format-changed'],
  ['a changed type', (d) => ((order(d).properties!.complete as Schema).type = 'string'), 'breaking', 'response-type-changed'],
  ['a raised minimum', (d) => ((order(d).properties!.quantity as Schema).minimum = 2), 'breaking', 'response-bounds-changed'],
  [
    'a new Error.code value',
    (d) =>
      ((schemas(d).Error!.properties!.code as Schema).enum = [
        ...((schemas(d).Error!.properties!.code as Schema).enum ?? []),
        'rate_limited',
      ]),
    'breaking',
    'response-enum-value-added',
  ],
  [
    'a new required query parameter',
    (d) => listOrders(d).parameters!.push({ name: 'status', in: 'query', required: true, schema: { type: 'string' } }),
    'breaking',
    'request-parameter-required-added',
  ],
  [
    'a new required header',
    (d) => listOrders(d).parameters!.push({ name: 'X-Tenant', in: 'header', required: true, schema: { type: 'string' } }),
    'breaking',
    'request-parameter-required-added',
  ],
  [
    'an optional parameter made required',
    (d) => ((listOrders(d).parameters![0] as OpenAPIV3.ParameterObject).required = true),
    'breaking',
    'request-parameter-made-required',
  ],
  [
    'a narrowed path parameter',
    (d) =>
      ((d.components!.parameters!.orderId as OpenAPIV3.ParameterObject).schema = {
        type: 'integer',
        format: 'int64',
        minimum: 1,
        maximum: 1000,
      }),
    'breaking',
    'request-parameter-bounds-narrowed',
  ],
  [
    'a new security requirement',
    (d) => {
      d.components!.securitySchemes!.tenant = { type: 'apiKey', in: 'header', name: 'X-Tenant-Key' };
      listOrders(d).security = [{ bearerAuth: [], tenant: [] }];
    },
    'breaking',
    'security-requirement-added',
  ],
  [
    'a removed response header',
    (d) => delete (listOrders(d).responses['200'] as OpenAPIV3.ResponseObject).headers!.ETag,
    'breaking',
    'response-header-removed',
  ],
  [
    'a new operation',
    (d) => (d.paths['/store/inventory'] = { get: { operationId: 'getInventory', responses: { '200': { description: 'Counts.' } } } }),
    'additive',
    'operation-added',
  ],
  [
    'a new operation on an existing path',
    (d) => (d.paths['/store/orders']!.head = { operationId: 'countOrders', responses: { '200': { description: 'Counts.' } } }),
    'additive',
    'operation-added',
  ],
  [
    'a new optional query parameter',
    (d) => listOrders(d).parameters!.push({ name: 'status', in: 'query', required: false, schema: { type: 'string' } }),
    'additive',
    'request-parameter-added',
  ],
  [
    'a new response header',
    (d) => ((cancelOrder(d).responses['204'] as OpenAPIV3.ResponseObject).headers = { 'X-Cancelled-At': { schema: { type: 'string' } } }),
    'additive',
    'response-header-added',
  ],
  ['an operation newly deprecated', (d) => (cancelOrder(d).deprecated = true), 'additive', 'operation-deprecated'],
  ['scopes declared where none were', (d) => (scoped(listOrders(d))['x-scopes'] = ['orders:read']), 'docs', 'operation-scopes-declared'],
  ['a description-only edit', (d) => (d.info.description = 'The orders of the petstore.'), 'docs', 'docs-changed'],
  ['an operation summary edit', (d) => (listOrders(d).summary = 'List the orders'), 'docs', 'docs-changed'],
  [
    'a field description edit',
    (d) => (order(d).properties!.quantity = { ...(order(d).properties!.quantity as Schema), description: 'How many.' }),
    'docs',
    'docs-changed',
  ],
];

/** The same, for an operation with a request body (a document that has one as its release). */
const withBody = documentWithNotes();
const bodyCases: Array<[string, (doc: Doc) => void, 'breaking' | 'additive', string]> = [
  [
    'a new required request field',
    (d) => {
      noteBody(d).properties!.author = { type: 'string' };
      noteBody(d).required = [...noteBody(d).required!, 'author'];
    },
    'breaking',
    'request-field-required-added',
  ],
  ['a new optional request field', (d) => (noteBody(d).properties!.colour = { type: 'string' }), 'additive', 'request-field-added'],
  [
    'a request bound narrowed',
    (d) => ((noteBody(d).properties!.text as Schema).maxLength = 10),
    'breaking',
    'request-field-bounds-narrowed',
  ],
  [
    'a request bound widened',
    (d) => ((noteBody(d).properties!.text as Schema).maxLength = 200),
    'additive',
    'request-field-bounds-widened',
  ],
];

/** Edits of the scopes a release declares: each refuses keys that were allowed, or allows keys that were refused. */
const withScopes = cloneDocument(released);
scoped(listOrders(withScopes))['x-scopes'] = ['orders:read'];
const scopeCases: Array<[string, (doc: Doc) => void]> = [
  ['a scope replaced', (d) => (scoped(listOrders(d))['x-scopes'] = ['orders:admin'])],
  ['a scope added', (d) => scoped(listOrders(d))['x-scopes']!.push('orders:cancel')],
  ['the scopes removed', (d) => delete scoped(listOrders(d))['x-scopes']],
];

describe('compareDocuments', () => {
  test.each(scopeCases)('%s is breaking (operation-scopes-changed)', (_case, edit) => {
    const findings = compareDocuments(withScopes, edited(edit, withScopes), BEFORE_SUNSET);

    expect(findings.map((f) => [f.class, f.rule])).toContainEqual(['breaking', 'operation-scopes-changed']);
  });

  test.each(cases.map(([name, edit, want, rule]) => [name, want, rule, edit] as const))('%s is %s (%s)', (_case, want, rule, edit) => {
    const findings = compareDocuments(released, edited(edit), BEFORE_SUNSET);

    expect(findings.length).toBeGreaterThan(0);
    expect(findings.map((f) => [f.class, f.rule])).toContainEqual([want, rule]);
    if (want !== 'breaking') expect(findings.filter((f) => f.class === 'breaking')).toEqual([]);
    if (want === 'docs') expect(findings.every((f) => f.class === 'docs')).toBe(true);
    for (const finding of findings) expect(finding.pointer).toMatch(/^(\/[^/]+)+$/);
  });

  test.each(bodyCases.map(([name, edit, want, rule]) => [name, want, rule, edit] as const))(
    'in a request body, %s is %s (%s)',
    (_case, want, rule, edit) => {
      const findings = compareDocuments(withBody, edited(edit, withBody), BEFORE_SUNSET);

      expect(findings.map((f) => [f.class, f.rule])).toContainEqual([want, rule]);
      if (want !== 'breaking') expect(findings.filter((f) => f.class === 'breaking')).toEqual([]);
    },
  );

  test('an unchanged document has no findings', () => {
    expect(compareDocuments(released, cloneDocument(released), BEFORE_SUNSET)).toEqual([]);
  });

  test('a finding names the JSON pointer of the change', () => {
    const findings = compareDocuments(released, edited(cases[2]![1]), BEFORE_SUNSET);

    expect(findings).toContainEqual(
      expect.objectContaining({ pointer: '/paths/~1store~1orders~1{orderId}/delete/responses/409', rule: 'response-status-removed' }),
    );
  });

  test.each([
    ['before its x-sunset, removing the deprecated getPetById is breaking', BEFORE_SUNSET, 'breaking', 'operation-removed'],
    ['after its x-sunset, removing it is additive', AFTER_SUNSET, 'additive', 'operation-removed-after-sunset'],
  ] as const)('%s', (_case, now, want, rule) => {
    const findings = compareDocuments(
      released,
      edited((d) => delete d.paths['/pets/{petId}']),
      now,
    );

    expect(findings.map((f) => [f.class, f.rule])).toEqual([[want, rule]]);
  });

  test('removing an operation that is not deprecated stays breaking after any sunset', () => {
    const findings = compareDocuments(
      released,
      edited((d) => delete cancelOrder(d).responses['409'] && delete d.paths['/store/orders']),
      AFTER_SUNSET,
    );

    expect(findings.map((f) => f.class)).toContain('breaking');
  });
});

describe('checkRelease', () => {
  const additive = (version: string) =>
    edited((d) => {
      d.info.version = version;
      listOrders(d).parameters!.push({ name: 'status', in: 'query', required: false, schema: { type: 'string' } });
    });
  const changelog = '# Changelog\n\n## 1.1.0 (2026-12-01)\n\n- listOrders takes `status`.\n\n## 1.0.0 (2026-11-22)\n';

  test('an additive change with a minor bump and a changelog section passes', () => {
    expect(checkRelease(released, additive('1.1.0'), { now: BEFORE_SUNSET, changelog }).problems).toEqual([]);
  });

  test.each([
    [
      'without a version bump',
      '1.0.0',
      changelog,
      'additive changes need a minor version bump: info.version is 1.0.0, and must be at least 1.1.0',
    ],
    [
      'with only a patch bump',
      '1.0.1',
      changelog,
      'additive changes need a minor version bump: info.version is 1.0.1, and must be at least 1.1.0',
    ],
    ['without a changelog section', '1.1.0', '# Changelog\n\n## 1.0.0 (2026-11-22)\n', 'CHANGELOG.md has no section for 1.1.0'],
  ])('an additive change %s fails, saying what is missing', (_case, version, log, problem) => {
    const report = checkRelease(released, additive(version), { now: BEFORE_SUNSET, changelog: log });

    expect(report.problems).toContainEqual(expect.stringContaining(problem));
  });

  test('a description-only change needs a patch bump, and passes with one', () => {
    const docs = (version: string) => edited((d) => Object.assign(d.info, { version, description: 'The orders.' }));

    expect(checkRelease(released, docs('1.0.0'), { now: BEFORE_SUNSET, changelog }).problems).toEqual([
      'description changes need a patch version bump: info.version is 1.0.0, and must be at least 1.0.1',
    ]);
    expect(checkRelease(released, docs('1.0.1'), { now: BEFORE_SUNSET, changelog }).problems).toEqual([]);
  });

  test('a breaking change fails whatever the version says', () => {
    const report = checkRelease(
      released,
      edited((d) => Object.assign(d.info, { version: '1.1.0' }) && delete cancelOrder(d).responses['409']),
      {
        now: BEFORE_SUNSET,
        changelog,
      },
    );

    expect(report.problems).toEqual([expect.stringContaining('1 breaking change to 1.0.0')]);
  });

  test('the unchanged document passes as it is', () => {
    expect(checkRelease(released, cloneDocument(released), { now: BEFORE_SUNSET, changelog: '' })).toEqual({
      baseVersion: '1.0.0',
      headVersion: '1.0.0',
      findings: [],
      problems: [],
    });
  });
});
