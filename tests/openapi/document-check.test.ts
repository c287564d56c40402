import fs from 'node:fs';
import { serviceOptions } from '../../src/config';
import os from 'node:os';
import path from 'node:path';
import OpenAPISchemaValidator from 'openapi-schema-validator';
import { documentCheck, documentSchema } from '../../src/openapi/document-check';
import type { OpenAPIV3 } from 'openapi-types';
import { cloneDocument, loadDocument } from '../../src/contract/document';
import type * as Handlers from '../../src/handlers/v1';
import type * as Feeds from '../../src/feed/event-feed';
import type * as Admissions from '../../src/http/admission';
import type * as Dispatcher from '../../src/http/dispatcher';
import type * as Logging from '../../src/logger';
import type * as Stores from '../../src/store';
import { ROOT } from '../helpers/project';

// The build compiles the checks that a document is OpenAPI 3.0, or 3.1, ahead of time
// (scripts/precompile.mjs); the built server uses them in place of the one openapi-backend compiles
// at every start, which checks every document against 3.0's schema. Each must say exactly what the
// same schema says compiled at run time. `npm test` builds first, so the built files are there.
const DIST = path.join(ROOT, 'dist');
type Check = ((document: unknown) => boolean) & { errors?: unknown[] | null; fingerprint?: string };
const precompiled = (line: '3.0' | '3.1'): Check =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require(path.join(DIST, 'generated', `openapi-${line}-check.js`)) as Check;
const compiledNow = (line: '3.0' | '3.1'): Check => {
  const { ajv, schema } = documentSchema(line);
  return ajv.compile(schema);
};

const shipped = loadDocument();
// The edits reach into the document's JSON freely: what they make is, on purpose, not a Document.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = Record<string, any>;
const broken = (edit: (document: Loose) => void): OpenAPIV3.Document => {
  const document = cloneDocument(shipped) as unknown as Loose;
  edit(document);
  return document as unknown as OpenAPIV3.Document;
};
const documents: Array<[string, OpenAPIV3.Document]> = [
  ['the shipped document', shipped],
  ['no info', broken((d) => delete d.info)],
  ['a response without a description', broken((d) => delete d.paths['/store/orders'].get.responses['200'].description)],
  ['a parameter in an unknown place', broken((d) => (d.components.parameters.orderId.in = 'body'))],
  ['a schema pattern that is not a regular expression', broken((d) => (d.components.schemas.Error.properties.code.pattern = '(['))],
  ['an unknown top-level field', broken((d) => (d.servers = 'everywhere'))],
];

const in31 = (edit: (document: Loose) => void = () => undefined): OpenAPIV3.Document =>
  broken((d) => {
    d.openapi = '3.1.0';
    d.components.schemas.Order.properties.id.examples = [1];
    edit(d);
  });
const CHECKS: Array<['3.0' | '3.1', string, OpenAPIV3.Document, boolean]> = [
  ...documents.map(([name, document]): ['3.0', string, OpenAPIV3.Document, boolean] => ['3.0', name, document, document === shipped]),
  [
    '3.0',
    'boolean exclusive bounds',
    broken((d) => Object.assign(d.components.schemas.Order.properties.quantity, { exclusiveMinimum: true })),
    true,
  ],
  ['3.0', 'a type list, which is 3.1', broken((d) => (d.components.schemas.Order.properties.id.type = ['integer', 'null'])), false],
  ['3.1', 'the shipped document moved to 3.1', in31(), true],
  ['3.1', 'a type list with "null"', in31((d) => (d.components.schemas.Order.properties.id.type = ['integer', 'null'])), true],
  ['3.1', 'a numeric exclusive bound', in31((d) => (d.components.schemas.Order.properties.quantity.exclusiveMinimum = 0)), true],
  [
    '3.1',
    'a boolean exclusive bound, which is 3.0',
    in31((d) => (d.components.schemas.Order.properties.quantity.exclusiveMinimum = true)),
    false,
  ],
  ['3.1', 'a nested schema that is not one', in31((d) => (d.components.schemas.Order.properties.id.minimum = 'one')), false],
  ['3.1', 'no info', in31((d) => delete d.info), false],
  ['3.1', 'a parameter in an unknown place', in31((d) => (d.components.parameters.orderId.in = 'body')), false],
];

describe('the precompiled OpenAPI checks', () => {
  test.each(CHECKS)('%s: %s is judged as the same schema judges it compiled now', (line, _name, document, valid) => {
    const built = precompiled(line);
    const now = compiledNow(line);

    expect(built(document)).toBe(valid);
    expect(now(document)).toBe(valid);
    expect(built.errors ?? []).toEqual(now.errors ?? []);
  });

  test.each(['3.0', '3.1'] as const)(
    "%s: code run from source (as here) checks with the build's, which says it was compiled from what that code would compile",
    (line) => {
      expect(precompiled(line).fingerprint).toBe(documentSchema(line).fingerprint);
      expect(documentCheck(line)).toBe(precompiled(line));
    },
  );

  test("3.0's is the OpenAPI Initiative's schema: it takes boolean exclusive bounds, which openapi-schema-validator's refuses", () => {
    const bounded = CHECKS.find(([, name]) => name === 'boolean exclusive bounds')![2];

    expect(precompiled('3.0')(bounded)).toBe(true);
    expect(new OpenAPISchemaValidator({ version: 3 }).validate(bounded).errors).not.toEqual([]);
  });

  test('is what the built server checks its document with: a document that is not OpenAPI is refused', async () => {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { createDispatcher } = require(path.join(DIST, 'src', 'http', 'dispatcher.js')) as typeof Dispatcher;
    const { openSqliteStore } = require(path.join(DIST, 'src', 'store')) as typeof Stores;
    const { silentLogger } = require(path.join(DIST, 'src', 'logger')) as typeof Logging;
    const { v1Handlers } = require(path.join(DIST, 'src', 'handlers', 'v1')) as typeof Handlers;
    const { EventFeed } = require(path.join(DIST, 'src', 'feed', 'event-feed.js')) as typeof Feeds;
    const { createAdmission } = require(path.join(DIST, 'src', 'http', 'admission.js')) as typeof Admissions;
    /* eslint-enable @typescript-eslint/no-require-imports */
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'petstore-document-check-'));
    const store = openSqliteStore(path.join(dir, 'store.db'));
    const options = {
      version: 'v1' as const,
      store,
      logger: silentLogger,
      definitions: v1Handlers,
      service: serviceOptions(),
      secret: Buffer.alloc(32),
      feed: new EventFeed(store),
      admission: createAdmission({ limit: 4, maxWaitMs: 500, queue: 16 }),
    };
    try {
      await expect(createDispatcher({ ...options, document: documents[1]![1] })).rejects.toThrow(
        /^Document is not valid OpenAPI\. 1 validation errors:\n/,
      );
      await expect(createDispatcher({ ...options, document: shipped })).resolves.toBeInstanceOf(Function);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
