import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAPISchemaValidator from 'openapi-schema-validator';
import type { OpenAPIV3 } from 'openapi-types';
import { cloneDocument, loadDocument } from '../../src/contract/document';
import type * as Handlers from '../../src/handlers/v1';
import type * as Feeds from '../../src/feed/event-feed';
import type * as Admissions from '../../src/http/admission';
import type * as Dispatcher from '../../src/http/dispatcher';
import type * as Logging from '../../src/logger';
import type * as Stores from '../../src/store';
import { ROOT } from '../helpers/project';

// The build compiles the check that a document is OpenAPI 3.0 ahead of time (scripts/precompile.mjs);
// the built server uses it in place of the one openapi-backend compiles at every start. It must
// say exactly what that one says. `npm test` builds first, so the built files are there.
const DIST = path.join(ROOT, 'dist');
type Check = ((document: unknown) => boolean) & { errors?: unknown[] | null };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const precompiled = require(path.join(DIST, 'generated', 'openapi-3.0-check.js')) as Check;
const library = new OpenAPISchemaValidator({ version: 3 });

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
  ['a parameter in an unknown place', broken((d) => (d.paths['/store/orders/{orderId}'].delete.parameters[0].in = 'body'))],
  ['a schema pattern that is not a regular expression', broken((d) => (d.components.schemas.Error.properties.code.pattern = '(['))],
  ['an unknown top-level field', broken((d) => (d.servers = 'everywhere'))],
];

describe('the precompiled OpenAPI 3.0 check', () => {
  test.each(documents)('gives the verdict and the errors openapi-schema-validator gives for %s', (_name, document) => {
    const valid = precompiled(document);
    const expected = library.validate(document).errors;

    expect(valid).toBe(expected.length === 0);
    expect(valid ? [] : precompiled.errors).toEqual(expected);
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
      chunkItems: 1000,
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
