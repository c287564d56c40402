import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import type { ErrorObject } from 'ajv';
import { loadDocument } from '../../src/contract/document';
import { createContractAjv, precompiledModule } from '../../src/openapi';
import * as formats from '../../src/openapi/formats';
import { startValidatorsModule } from '../../src/start-validators';
import { ROOT } from '../helpers/project';

// The build writes every validator a start makes as Ajv's standalone code (scripts/precompile.mjs);
// a start takes them from that module (tests/openapi/precompiled.test.ts). Here this test file,
// whose modules are its own, records every validator it compiles and every definition it
// dereferences, as the build does: what it writes is what this code, this Ajv and this
// dereferencer write now.

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
interface Module {
  fingerprint: string;
  validators: Record<string, () => Validate>;
}

/** The module's text run as the build's module is, its formats this code's own. */
function run(text: string): Module {
  const module = { exports: {} };
  const required = (name: string): unknown =>
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    name === '../src/openapi/formats' ? formats : require(name);
  vm.compileFunction(text, ['exports', 'require', 'module'])(module.exports, required, module);
  return module.exports as Module;
}

describe('the validators the build compiles', () => {
  let module: string;
  let definitions: string;
  beforeAll(async () => {
    ({ validators: module, definitions } = await startValidatorsModule());
  });

  test('are, in the build, exactly the code this Ajv writes for what a start makes', () => {
    expect(module).toBe(fs.readFileSync(path.join(ROOT, 'dist', 'generated', 'validators.js'), 'utf8'));
  });

  test("come with the documents' definitions, in the build exactly as the library dereferences them now", () => {
    expect(Object.keys((JSON.parse(definitions) as { definitions: object }).definitions).length).toBeGreaterThanOrEqual(3);
    expect(definitions).toBe(fs.readFileSync(path.join(ROOT, 'dist', 'generated', 'definitions.json'), 'utf8'));
  });

  test('answer, and report errors, exactly as the validators compiled now, formats included', () => {
    const schema = {
      type: 'object',
      required: ['shipDate', 'quantity'],
      additionalProperties: false,
      properties: {
        shipDate: { type: 'string', format: 'date-time' },
        quantity: { type: 'integer', format: 'int32', minimum: 1 },
        id: { type: 'integer', format: 'int64' },
        contact: { type: 'string', format: 'email' },
        note: { type: 'string', pattern: '^[a-z]+$', maxLength: 8 },
      },
    };
    const before = new Set(Object.keys(run(module).validators));
    const now = createContractAjv(loadDocument()).compile(schema);
    expect(now({})).toBe(false);
    const added = Object.entries(run(precompiledModule()).validators).filter(([key]) => !before.has(key));
    expect(added).toHaveLength(1);
    const built = added[0]![1]();

    const values = [
      { shipDate: '2026-11-30T01:02:03Z', quantity: 5, id: 9007199254740991, contact: 'a@b.co', note: 'ok' },
      { shipDate: '2026-11-30T01:02:03.5+05:30', quantity: 2147483647 },
      { shipDate: '2026-02-30T00:00:00Z', quantity: 1 },
      { shipDate: '2026-11-30T01:02:03', quantity: 1 },
      { shipDate: '2026-11-30T24:00:00Z', quantity: 1 },
      { shipDate: '2026-11-30T01:02:03Z', quantity: 2147483648 },
      { shipDate: '2026-11-30T01:02:03Z', quantity: 0, id: 1e20 },
      { shipDate: '2026-11-30T01:02:03Z', quantity: 1.5, contact: 'not an address' },
      { shipDate: '2026-11-30T01:02:03Z', quantity: 1, note: 'UPPER' },
      { shipDate: '2026-11-30T01:02:03Z', quantity: 1, note: 'muchtoolong' },
      { shipDate: 5, quantity: '1', extra: true },
      {},
      [],
      null,
      'order',
    ];
    for (const value of values) {
      expect([built(value), built.errors]).toEqual([now(value), now.errors]);
    }
    expect(values.filter((value) => built(value))).toHaveLength(2);
  });
});
