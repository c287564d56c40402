import fc from 'fast-check';
import OpenAPIBackend from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { cloneDocument, loadDocument } from '../../src/contract/document';
import { createContractAjv } from '../../src/openapi';
import { ItemViolation, compileItemWriter, type ItemWriter } from '../../src/http/item-writer';
import { KNOWN_DATE_TIMES } from '../helpers/date-times';

// Every item of a streamed list goes through its item writer. What it writes must be exactly the
// declared properties of an item the contract's Ajv accepts, and it must refuse every other item.
const document = loadDocument();
const ajv = createContractAjv(document);

/** The list's item schema as openapi-backend dereferences it (its validators are not needed, so not made). */
async function orderSchema(): Promise<OpenAPIV3.SchemaObject> {
  const api = new OpenAPIBackend({ definition: cloneDocument(document), apiRoot: '/v1', validate: false });
  await api.init();
  const response = api.getOperation('listOrders')!.responses['200'] as OpenAPIV3.ResponseObject;
  return (response.content!['application/json']!.schema as OpenAPIV3.ArraySchemaObject).items as OpenAPIV3.SchemaObject;
}

/** The outcome of writing an item alone: the JSON, or the refusal. */
function outcome(write: ItemWriter, item: unknown): { json: string } | { refused: string } {
  try {
    return { json: write([item], '', '') };
  } catch (err) {
    if (err instanceof ItemViolation) return { refused: err.problem };
    throw err;
  }
}

/** The ItemViolation that writing `items` throws. */
function violation(write: ItemWriter, items: unknown[]): ItemViolation {
  try {
    write(items, '[', ']');
  } catch (err) {
    if (err instanceof ItemViolation) return err;
    throw err;
  }
  throw new Error('no item was refused');
}

const SAFE = Number.MAX_SAFE_INTEGER;
/** Mostly a value the schema allows, sometimes one just past it. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<U>) =>
  fc.oneof({ weight: 12, arbitrary: valid }, { weight: 1, arbitrary: invalid });
const integerish = mostly(
  fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.constantFrom(SAFE, -SAFE, 0, 1, -0)),
  fc.constantFrom(SAFE + 1, -SAFE - 1, 2 ** 63, 1.5, NaN, Infinity, -Infinity, '1', null, true, undefined, {}, []),
);
const shipDate = mostly(fc.constantFrom(...KNOWN_DATE_TIMES), fc.oneof(fc.string({ maxLength: 70 }), fc.constantFrom(7, null, undefined)));
const item = mostly(
  fc.record({
    id: integerish,
    petId: integerish,
    quantity: integerish,
    shipDate,
    complete: mostly(fc.boolean(), fc.constantFrom(0, 'true', undefined)),
  }),
  fc.oneof(fc.constantFrom(null, 'order', 42, [], [1]), fc.record({ id: integerish, shipDate }, { requiredKeys: [] })),
);

test('the Order writer writes exactly the items the contract accepts, and refuses the rest', async () => {
  const schema = await orderSchema();
  const write = compileItemWriter(schema, ajv);
  const validate = ajv.compile(schema);
  let written = 0;

  fc.assert(
    fc.property(item, (candidate) => {
      const result = outcome(write, candidate);
      // What is sent is the declared properties only; Ajv judges exactly that.
      const declared =
        typeof candidate === 'object' && candidate !== null && !Array.isArray(candidate)
          ? Object.fromEntries(
              Object.keys(schema.properties!)
                .filter((name) => (candidate as Record<string, unknown>)[name] !== undefined)
                .map((name) => [name, (candidate as Record<string, unknown>)[name]]),
            )
          : candidate;
      if ('json' in result) {
        written += 1;
        expect(validate(declared)).toBe(true);
        expect(JSON.parse(result.json)).toEqual(JSON.parse(JSON.stringify(declared)));
        expect(validate(JSON.parse(result.json))).toBe(true);
      } else {
        expect(validate(declared)).toBe(false);
      }
    }),
    { numRuns: 20_000, seed: 20261122 },
  );
  expect(written).toBeGreaterThan(200);
});

test.each([
  ['shipDate 2026-02-30T10:00:00Z', { shipDate: '2026-02-30T10:00:00Z' }, 'shipDate must match format "date-time"'],
  ['a missing complete', { complete: undefined }, 'complete is required'],
  ['quantity 0', { quantity: 0 }, 'quantity must be >= 1'],
  ['an id past the safe range', { id: SAFE + 1 }, 'id must be <= 9007199254740991'],
  ['a string petId', { petId: '7' }, 'petId must be integer'],
])('an order with %s is refused, naming the field and the rule', async (_case, overrides, problem) => {
  const write = compileItemWriter(await orderSchema(), ajv);
  const order = { id: 1, petId: 2, quantity: 3, shipDate: '2026-12-01T10:00:00Z', complete: false, ...overrides };

  expect(outcome(write, order)).toEqual({ refused: problem });
});

test('a date-time whose separator is a control character is still written as valid JSON', async () => {
  const write = compileItemWriter(await orderSchema(), ajv);

  const json = write([{ id: 1, petId: 2, quantity: 3, shipDate: '2026-12-01\t10:00:00Z', complete: true }], '', '');

  expect(JSON.parse(json)).toEqual({ id: 1, petId: 2, quantity: 3, shipDate: '2026-12-01\t10:00:00Z', complete: true });
});

test('a schema beyond flat scalars takes the general path (Ajv and fast-json-stringify) with the same verdicts', () => {
  const schema: OpenAPIV3.SchemaObject = {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'tags'],
    properties: { id: { type: 'integer', format: 'int64' }, tags: { type: 'array', items: { type: 'string', format: 'date-time' } } },
  };
  const write = compileItemWriter(schema, ajv);

  expect(JSON.parse(write([{ id: 1, tags: ['2026-12-01T10:00:00Z'] }], '', ''))).toEqual({ id: 1, tags: ['2026-12-01T10:00:00Z'] });
  expect(outcome(write, { id: 1, tags: ['2026-02-30T10:00:00Z'] })).toEqual({ refused: 'tags.0 must match format "date-time"' });
  expect(outcome(write, { id: 1, tags: [], extra: 1 })).toEqual({ refused: 'extra is not a known field' });
});

/** The properties of `item` that `schema` declares. */
function declaredOf(schema: OpenAPIV3.SchemaObject, item: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(item).filter(([name]) => name in (schema.properties ?? {})));
}

describe.each([
  ['the flat path', orderSchema],
  [
    'the general path',
    async (): Promise<OpenAPIV3.SchemaObject> => ({
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: { id: { type: 'integer', format: 'int64' }, tags: { type: 'array', items: { type: 'string' } } },
    }),
  ],
])('a run of items, by %s', (_path, schemaOf) => {
  test('is written joined by commas, between what comes before and after it, as JSON.stringify writes them', async () => {
    const schema = await schemaOf();
    const write = compileItemWriter(schema, ajv);
    const items = [1, 2, 3].map((id) =>
      declaredOf(schema, { id, petId: id * 10, quantity: id, shipDate: '2026-12-01T10:00:00Z', complete: id === 2 }),
    );

    expect(write(items, '[', ']')).toBe(JSON.stringify(items));
    expect(write(items, ',', '')).toBe(`,${JSON.stringify(items).slice(1, -1)}`);
    expect(write([], '[', ']')).toBe('[]');
  });

  test('is refused at its first bad item, which the violation names', async () => {
    const schema = await schemaOf();
    const write = compileItemWriter(schema, ajv);
    const good = declaredOf(schema, { id: 1, petId: 2, quantity: 3, shipDate: '2026-12-01T10:00:00Z', complete: false });
    const bad = { ...good, id: 1.5 };
    const worse = { ...good, id: 'x' };

    const refused = violation(write, [good, bad, worse]);

    expect(refused.item).toBe(bad);
    expect(refused.problem).toMatch(/^id must be integer$/);
  });
});
