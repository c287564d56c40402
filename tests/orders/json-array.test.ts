import { JsonArrayError, jsonArrayBatches } from '../../src/orders/json-array';

/** Every element the reader yields when `text` arrives as UTF-8 in chunks of `size` bytes. */
async function elements(text: string, size: number): Promise<unknown[]> {
  const bytes = Buffer.from(text);
  const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
  const all: unknown[] = [];
  for await (const batch of jsonArrayBatches(chunks)) all.push(...batch);
  return all;
}

const records = [
  { id: 1, note: 'a "quoted" ] and a , comma', nested: { list: [1, [2, 3]], empty: {} } },
  'a string with \\" and \\\\',
  'a backslash at the end \\',
  { '\\': '\\\\\\"]}' },
  42,
  -0.5e3,
  true,
  null,
  [],
  { unicode: 'żółw 🐢', escape: '\\u005d' },
];

describe('jsonArrayBatches', () => {
  test.each([1, 2, 3, 7, 64, 100000])('reads every element exactly as JSON.parse does, in chunks of %i bytes', async (size) => {
    const text = ` \n[ ${records.map((r) => JSON.stringify(r)).join(' ,\n')} ]\n `;

    expect(await elements(text, size)).toEqual(JSON.parse(text));
  });

  test('a multi-byte character split between two chunks is read whole', async () => {
    const text = JSON.stringify([{ turtle: '🐢🐢' }]);
    const bytes = Buffer.from(text);
    const cut = bytes.indexOf(Buffer.from('🐢')) + 2;
    const all: unknown[] = [];

    for await (const batch of jsonArrayBatches([bytes.subarray(0, cut), bytes.subarray(cut)])) all.push(...batch);

    expect(all).toEqual([{ turtle: '🐢🐢' }]);
  });

  test.each([
    ['an empty array', '[]', []],
    ['an empty array with space inside', '[ \n ]', []],
  ])('%s has no elements', async (_case, text, want) => {
    expect(await elements(text, 1)).toEqual(want);
  });

  test.each([
    ['an object', '{"id": 1}', 'the file must hold a JSON array of orders'],
    ['nothing at all', '  ', 'the file is empty: it must hold a JSON array of orders'],
    ['a broken element', '[{"id": 1}, {"id": }]', 'record 1: '],
    ['a broken element among good ones in one chunk', '[1, 2, {"id": }, 4, 5]', 'record 2: '],
    ['a missing comma', '[{"id": 1} {"id": 2}]', 'record 0: '],
    ['a trailing comma', '[{"id": 1},]', 'record 1: a value is missing before "]"'],
    ['a leading comma', '[,{"id": 1}]', 'record 0: a value is missing before ","'],
    ['two commas', '[1,,2]', 'record 1: a value is missing before ","'],
    ['an array that never closes', '[{"id": 1}, {"id": 2}', 'the file ends inside the array, at record 1'],
    ['a string that never closes', '[{"id": "1}]', 'the file ends inside the array, at record 0'],
    ['text after the array', '[1] [2]', 'there is text after its closing "]"'],
  ])('%s is an error that says where', async (_case, text, message) => {
    for (const size of [1, 4, 1000]) {
      const attempt = elements(text, size);

      await expect(attempt).rejects.toThrow(JsonArrayError);
      await expect(elements(text, size)).rejects.toThrow(message);
    }
  });
});
