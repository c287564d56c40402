import { Readable } from 'node:stream';
import { loadDocument } from '../../src/contract/document';
import { ImportError, compileImportValidator, importOrders } from '../../src/orders';
import { eachStore } from '../helpers/stores';

const validate = compileImportValidator(loadDocument());

eachStore((s) => {
  const good = { petId: 1, quantity: 1, shipDate: '2026-12-01T10:00:00Z', complete: false };

  test('valid records are all imported, with ids assigned where absent and statuses kept', async () => {
    const text = JSON.stringify([
      { ...good, id: 10 },
      { ...good, status: 'shipped', complete: true },
      { ...good, id: -4, status: 'pending' },
    ]);

    const count = await importOrders(s.store, validate, text);

    expect(count).toBe(3);
    expect((await s.rows()).map((r) => [r.id, r.status])).toEqual([
      [-4, 'pending'],
      [10, 'pending'],
      [11, 'shipped'],
    ]);
  });

  test('an empty array imports nothing and succeeds', async () => {
    await expect(importOrders(s.store, validate, '[]')).resolves.toBe(0);
  });

  test.each([
    ['petId is missing', { quantity: 1, shipDate: good.shipDate, complete: false }, 'record 1: petId is required'],
    ['petId is a string', { ...good, petId: '5' }, 'record 1: petId must be integer'],
    ['petId is fractional', { ...good, petId: 1.5 }, 'record 1: petId must be integer'],
    ['id is beyond the safe range', { ...good, id: 9007199254740992 }, 'record 1: id must be <= 9007199254740991'],
    ['id is below the safe range', { ...good, id: -9007199254740992 }, 'record 1: id must be >= -9007199254740991'],
    ['quantity is zero', { ...good, quantity: 0 }, 'record 1: quantity must be >= 1'],
    ['shipDate has no time zone', { ...good, shipDate: '2026-12-01T10:00:00' }, 'record 1: shipDate must match format "date-time"'],
    ['shipDate is not a date', { ...good, shipDate: 'tomorrow' }, 'record 1: shipDate must match format "date-time"'],
    ['shipDate is an impossible date', { ...good, shipDate: '2026-02-30T10:00:00Z' }, 'record 1: shipDate must match format "date-time"'],
    ['complete is a string', { ...good, complete: 'yes' }, 'record 1: complete must be boolean'],
    ['status is cancelled', { ...good, status: 'cancelled' }, 'record 1: status must be one of "pending", "shipped"'],
    ['there is an unknown field', { ...good, colour: 'red' }, 'record 1: colour is not a known field'],
    ['the record is not an object', 42, 'record 1: value must be object'],
  ])('when %s, the import names the record and field and writes nothing', async (_case, bad, message) => {
    const text = JSON.stringify([{ ...good, id: 1 }, bad, { ...good, id: 3 }]);

    const attempt = importOrders(s.store, validate, text);

    await expect(attempt).rejects.toThrow(ImportError);
    await expect(attempt).rejects.toThrow(message);
    expect(await s.rows()).toEqual([]);
  });

  test.each([
    ['the file is not JSON', '[{"petId": 1,', 'the file is not valid JSON'],
    ['the file is an object', JSON.stringify(good), 'the file must hold a JSON array of orders'],
    [
      'two records share an id',
      JSON.stringify([
        { ...good, id: 7 },
        { ...good, id: 7 },
      ]),
      'record 1: id 7 repeats the id of record 0',
    ],
  ])('when %s, the import fails clearly and writes nothing', async (_case, text, message) => {
    await expect(importOrders(s.store, validate, text)).rejects.toThrow(message);
    expect(await s.rows()).toEqual([]);
  });

  test('a record whose id is already in the store fails the whole import', async () => {
    await importOrders(s.store, validate, JSON.stringify([{ ...good, id: 7 }]));

    const attempt = importOrders(
      s.store,
      validate,
      JSON.stringify([
        { ...good, id: 8 },
        { ...good, id: 7 },
      ]),
    );

    await expect(attempt).rejects.toThrow('record 1: id 7 is already taken by an existing order');
    expect((await s.rows()).map((r) => r.id)).toEqual([7]);
  });

  test('a record without an id fails clearly when no larger id is free, naming the first such record', async () => {
    const text = JSON.stringify([{ ...good, id: 9007199254740990 }, good, good]);

    const attempt = importOrders(s.store, validate, text);

    await expect(attempt).rejects.toThrow('record 2: id cannot be assigned: no larger id is free; give this record an id');
    expect(await s.rows()).toEqual([]);
  });

  test('records without an id get the ids after the largest one, in file order, never one the file uses', async () => {
    await importOrders(s.store, validate, JSON.stringify([{ ...good, id: 3 }]));

    await importOrders(s.store, validate, JSON.stringify([good, { ...good, id: 10 }, good]));

    expect((await s.rows()).map((r) => r.id)).toEqual([3, 10, 11, 12]);
  });

  test('a stream that breaks off mid-record fails the import and writes nothing', async () => {
    const text = JSON.stringify([
      { ...good, id: 1 },
      { ...good, id: 2 },
    ]).slice(0, -20);

    await expect(importOrders(s.store, validate, text)).rejects.toThrow('the file is not valid JSON');
    expect(await s.rows()).toEqual([]);
  });

  test('the first record that repeats an earlier id is the error, however far apart they are', async () => {
    // Far more records than one batch or one COPY chunk holds, with two repeats; the earlier one is named.
    const records = Array.from({ length: 5000 }, (_, i) => ({ ...good, id: i + 1 }));
    records[4000] = { ...good, id: 17 };
    records[4500] = { ...good, id: 3 };

    await expect(importOrders(s.store, validate, JSON.stringify(records))).rejects.toThrow(
      'record 4000: id 17 repeats the id of record 16',
    );
    expect(await s.rows()).toEqual([]);
  });

  test('ids in any order go in by id, and a repeat after the ids stopped rising is still named', async () => {
    const file = (ids: number[]) => JSON.stringify(ids.map((id) => ({ ...good, id })));
    await importOrders(s.store, validate, file([50, 3, 99, 7]));

    expect((await s.rows()).map((r) => r.id)).toEqual([3, 7, 50, 99]);
    await expect(importOrders(s.store, validate, file([200, 150, 300, 150]))).rejects.toThrow(
      'record 3: id 150 repeats the id of record 1',
    );
    expect((await s.rows()).map((r) => r.id)).toEqual([3, 7, 50, 99]);
  });

  test('a repeated id before a record the file cannot give is the error reported', async () => {
    const records = Array.from({ length: 3000 }, (_, i) => ({ ...good, id: i + 1 }));
    records[1200] = { ...good, id: 5 };
    const text = `${JSON.stringify(records).slice(0, -1)},{"petId": 1,`;

    await expect(importOrders(s.store, validate, text)).rejects.toThrow('record 1200: id 5 repeats the id of record 4');
    expect(await s.rows()).toEqual([]);
  });

  test('a repeat and a record the contract refuses close together: the repeat, which comes first, is the error', async () => {
    const records: object[] = [1, 2, 3, 2].map((id) => ({ ...good, id }));
    records.push({ ...good, id: 9, quantity: 0 });

    await expect(importOrders(s.store, validate, JSON.stringify(records))).rejects.toThrow('record 3: id 2 repeats the id of record 1');
    expect(await s.rows()).toEqual([]);
  });

  test('a repeat in the middle of a long run of rising ids names the record that repeats', async () => {
    const records = Array.from({ length: 100 }, (_, i) => ({ ...good, id: i + 1 }));
    records[70] = { ...good, id: 69 };

    await expect(importOrders(s.store, validate, JSON.stringify(records))).rejects.toThrow('record 70: id 69 repeats the id of record 68');
    expect(await s.rows()).toEqual([]);
  });

  test('a record the store itself refuses writes nothing, whatever characters it holds', async () => {
    // Past the validator (the store's own callers), a value with tabs, newlines and backslashes
    // must reach the store as one value, and its checks refuse it whole.
    const records = [
      { ...good, id: 1 },
      { ...good, id: 2, shipDate: '2026-12-01T10:00:00Z\t3\t4\n5\\N' },
    ];

    // Matched by message: better-sqlite3's errors come from the realm that first loaded it, so in a
    // jest worker they need not be instances of this file's Error (toThrow would not see them).
    await expect(s.store.importOrders(records)).rejects.toMatchObject({ message: expect.stringMatching(/order_ship_date_rfc3339/) });
    expect(await s.rows()).toEqual([]);
  });

  test.each([
    ['an id past the safe range', { id: 2 ** 53 }, /order_id_safe/],
    ['a petId past the safe range', { petId: -(2 ** 53) }, /order_pet_id_safe/],
    ['a quantity of zero', { quantity: 0 }, /order_quantity_range/],
    ['an impossible ship date', { shipDate: '2026-02-30T10:00:00Z' }, /order_ship_date_rfc3339/],
    ['an unknown status', { status: 'lost' }, /order_status_known/],
    ['the status cancelled', { status: 'cancelled' }, /order_cancelled_at/],
  ])('the store refuses a record with %s, under the constraint that says why, and writes nothing', async (_case, bad, constraint) => {
    const records = [{ ...good, id: 1 }, { ...good, id: 2, ...bad } as never, { ...good, id: 3 }];

    await expect(s.store.importOrders(records)).rejects.toMatchObject({ message: expect.stringMatching(constraint) });
    expect(await s.rows()).toEqual([]);
  });

  test('progress is reported as the file is read, with how many records have been read', async () => {
    const seen: number[] = [];
    const record = JSON.stringify(good);
    // Three chunks: the first completes one record, the second two more, the third the last one.
    const chunks = [`[${record},${record.slice(0, 10)}`, `${record.slice(10)},${record},${record.slice(0, 5)}`, `${record.slice(5)}]`];

    await importOrders(s.store, validate, Readable.from(chunks), (n) => seen.push(n));

    expect(seen).toEqual([1, 3, 4]);
    expect(await s.rows()).toHaveLength(4);
  });
});
