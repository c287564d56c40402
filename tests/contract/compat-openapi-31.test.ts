import path from 'node:path';
import type { OpenAPIV3 } from 'openapi-types';
import { checkRelease } from '../../src/contract/compat/compare';
import { cloneDocument, loadDocument } from '../../src/contract/document';
import { ROOT } from '../helpers/project';

// v3 moved from OpenAPI 3.0 (3.1.0) to 3.1 (3.1.1) with the same contract. The compat gate compares
// what the two documents mean, not how they spell it: the move alone is docs-only, and a real break
// made in the same edit is still breaking.
const released = loadDocument(path.join(ROOT, 'spec', 'released', '3.1.0.yaml'));
const moved = loadDocument(path.join(ROOT, 'spec', 'released', '3.1.1.yaml'));
const now = new Date('2026-11-27T00:00:00Z');
const changelog = '## 3.2.0 (2026-12-01)\n';

/** The moved document, as 3.2.0, with `edit` made to it. */
function movedAnd(edit: (document: OpenAPIV3.Document) => void): OpenAPIV3.Document {
  const document = cloneDocument(moved);
  document.info.version = '3.2.0';
  edit(document);
  return document;
}
const schema = (document: OpenAPIV3.Document, name: string) => document.components!.schemas![name] as OpenAPIV3.SchemaObject;
const property = (document: OpenAPIV3.Document, name: string, field: string) =>
  schema(document, name).properties![field] as Record<string, unknown>;

test('the move from 3.0 to 3.1 alone is docs-only: nullable as a type list, example as examples, the license by identifier', () => {
  expect(released.openapi).toBe('3.0.3');
  expect(moved.openapi).toBe('3.1.0');

  const report = checkRelease(released, moved, { now, changelog: '' });

  expect(report.problems).toEqual([]);
  expect(report.findings.map((finding) => finding.class)).toEqual(report.findings.map(() => 'docs'));
});

test.each([
  [
    'a required reply field made nullable',
    (document: OpenAPIV3.Document) => (property(document, 'Order', 'complete').type = ['boolean', 'null']),
    /complete\/type$/,
  ],
  [
    'a const that narrows a request field',
    (document: OpenAPIV3.Document) => (property(document, 'NewOrder', 'quantity').const = 1),
    /requestBody\/.*quantity\/const$/,
  ],
])('the same move with %s is breaking', (_case, edit, pointer) => {
  const report = checkRelease(released, movedAnd(edit), { now, changelog });

  const breaking = report.findings.filter((finding) => finding.class === 'breaking');
  expect(breaking.length).toBeGreaterThan(0);
  expect(breaking.every((finding) => pointer.test(finding.pointer))).toBe(true);
  expect(report.problems[0]).toMatch(/breaking change/);
});

test('the same move with an optional query parameter added is additive, with its minor bump and changelog section', () => {
  const report = checkRelease(
    released,
    movedAnd((document) =>
      document.paths['/store/order-events']!.get!.parameters!.push({
        name: 'type',
        in: 'query',
        required: false,
        schema: { type: 'string', enum: ['order.created', 'order.shipped', 'order.cancelled'] },
      }),
    ),
    { now, changelog },
  );

  expect(report.problems).toEqual([]);
  expect(report.findings.filter((finding) => finding.class !== 'docs').map((finding) => [finding.class, finding.rule])).toEqual([
    ['additive', 'request-parameter-added'],
  ]);
});
