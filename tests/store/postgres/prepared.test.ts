import { MOST_PREPARED, prepared } from '../../../src/store/postgres/dialect';

// Which statements PostgreSQL is asked to prepare, and under what name: the same text always under
// the same name (pg refuses one name for two texts), a statement without values never.
describe('prepared', () => {
  test('a statement with values is prepared under a name of its own, the same each time', () => {
    const first = prepared('SELECT $1::int AS one -- prepared, first', [1]);
    const again = prepared('SELECT $1::int AS one -- prepared, first', [2]);
    const other = prepared('SELECT $1::int AS two -- prepared, other', [1]);

    expect(first.name).toMatch(/^petstore_\d+$/);
    expect(again.name).toBe(first.name);
    expect(again.values).toEqual([2]);
    expect(other.name).toMatch(/^petstore_\d+$/);
    expect(other.name).not.toBe(first.name);
  });

  test('a statement without values is sent unprepared, as a simple query that may hold several', () => {
    const config = prepared('BEGIN; SELECT 1; COMMIT', []);

    expect(config).toEqual({ text: 'BEGIN; SELECT 1; COMMIT' });
  });

  test('rows as arrays are asked for when told', () => {
    expect(prepared('SELECT $1::int AS one -- prepared, array', [1], 'array')).toMatchObject({ rowMode: 'array', values: [1] });
  });

  test(`past ${MOST_PREPARED} texts, a new one runs unprepared and those prepared keep their names`, () => {
    const kept = prepared('SELECT $1::int AS one -- prepared, kept', [1]).name;
    for (let i = 0; i < MOST_PREPARED; i += 1) prepared(`SELECT $1::int AS n -- prepared, filler ${i}`, [i]);

    const late = prepared('SELECT $1::int AS one -- prepared, late', [1]);

    expect(late.name).toBeUndefined();
    expect(late).toEqual({ text: 'SELECT $1::int AS one -- prepared, late', values: [1] });
    expect(prepared('SELECT $1::int AS one -- prepared, kept', [1]).name).toBe(kept);
  });
});
