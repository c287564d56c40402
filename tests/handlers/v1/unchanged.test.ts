import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { OpenAPIV3 } from 'openapi-types';
import { createApp } from '../../../src/app';
import { compareDocuments } from '../../../src/contract/compat/compare';
import { isOpenApiDocument } from '../../../src/contract/document';
import { sql } from '../../helpers/postgres';
import { eachStore } from '../../helpers/stores';
import { recordV1, seedV1Store, type RecordedResponse } from '../../helpers/v1-scenario';
import { ROOT } from '../../helpers/project';

// v1 did not move when v2 came: the same requests, on the same store, get the same bytes as
// before v2 existed. tests/fixtures/v1-responses.json was recorded by recordV1 from the release
// before v2 (1.0.0's code), on SQLite; both stores must answer exactly that. The one exception is
// the document itself, whose words have had documentation releases since (1.0.1): it may differ
// only in what the compatibility check classes as docs.
const before = JSON.parse(fs.readFileSync(path.join(ROOT, 'tests', 'fixtures', 'v1-responses.json'), 'utf8')) as RecordedResponse[];

/** The step of the recording that reads the v1 document. */
const DOCUMENT = 'GET document';

function documentIn(response: RecordedResponse): OpenAPIV3.Document {
  const document: unknown = JSON.parse(response.body);
  if (!isOpenApiDocument(document)) throw new Error(`the body of "${response.request}" is not an OpenAPI document`);
  return document;
}

eachStore((s) => {
  test('every v1 response is byte for byte what it was before v2', async () => {
    await seedV1Store(s.store, async (statement) => {
      if (s.kind.name === 'postgres') await sql(s.fresh.env.PETSTORE_DATABASE_URL!, statement);
      else {
        const db = new Database(s.fresh.cliArgs[1]);
        db.exec(statement);
        db.close();
      }
    });

    const now = await recordV1(await createApp({ store: s.store }), s.key);

    expect(before).toHaveLength(20);
    for (let i = 0; i < before.length; i += 1) {
      if (before[i]!.request === DOCUMENT) continue;
      expect(now[i]).toEqual(before[i]);
    }
    const [then, served] = [before, now].map((responses) => responses.find((response) => response.request === DOCUMENT)!);
    const { 'content-length': _thenLength, ...thenHeaders } = then!.headers;
    const { 'content-length': _servedLength, ...servedHeaders } = served!.headers;
    expect({ status: served!.status, headers: servedHeaders }).toEqual({ status: then!.status, headers: thenHeaders });
    const findings = compareDocuments(documentIn(then!), documentIn(served!), new Date());
    expect(findings.filter((finding) => finding.class !== 'docs')).toEqual([]);
  });
});
