import DataLoader from 'dataloader';
import type pg from 'pg';
import { rowToRecord } from '../core';
import type { Row } from '../dialect';
import { KEY_FOUND_COLUMNS, KEY_SQL, keyMatchIn } from '../keys';
import type { OrderRow } from '../sql';
import type { KeyMatch, OrderRecord } from '../types';
import { guard, prepared } from './dialect';

/**
 * Every key whose secret, or whose replaced secret, is one of `$1` (`$2` the same). One secret is
 * looked for with KEY_SQL.find: a comparison with an array costs PostgreSQL more than one with a value.
 */
const KEYS_SQL = `SELECT ${KEY_FOUND_COLUMNS} FROM api_keys WHERE key_hash = ANY($1) OR previous_hash = ANY($2)`;
/** The most reads one statement answers; more wait for the next. */
const MOST_AT_ONCE = 256;

/**
 * How a DataLoader gathers the asks of one turn of the event loop: sent once the turn's I/O
 * callbacks have run (setImmediate), so that they wait for no timer; nothing kept between turns.
 */
export const ONE_TURN = {
  cache: false,
  maxBatchSize: MOST_AT_ONCE,
  batchScheduleFn: (send: () => void) => void setImmediate(send),
} as const;

/**
 * The reads every keyed request makes, the key check and one order's read, asked of PostgreSQL for
 * all the requests that ask in one turn of the event loop at once: one statement for their keys,
 * one for their orders. A statement costs a round trip and most of a query's work in both
 * processes whatever it reads, so under load each request costs a share of one, where it cost two.
 *
 * Nothing is kept between turns (DataLoader without its cache): every check reads the keys as they
 * are then, so a revocation holds from the next request in every instance, as it did. A turn's
 * reads are sent once the turn's I/O callbacks have run (setImmediate), so they wait for no timer.
 * A statement that fails fails each read it held, as its own statement would have.
 */
export class BatchedReads {
  readonly #keys: DataLoader<string, readonly Row[]>;
  readonly #orders: DataLoader<number, OrderRecord | undefined>;

  /**
   * `orders` are the store's own statements on its orders: `order` reads one (`$1`), `ordersIn`
   * each named in the array `$1`, unless it has been cancelled.
   */
  constructor(pool: pg.Pool, orders: { readonly order: string; readonly ordersIn: string }) {
    this.#keys = new DataLoader(async (hashes) => {
      const distinct = [...new Set(hashes)];
      const [text, values] = distinct.length === 1 ? [KEY_SQL.find, [distinct[0], distinct[0]]] : [KEYS_SQL, [distinct, distinct]];
      const { rows } = await guard(() => pool.query<Row>(prepared(text, values)));
      // Each check picks its key from them all (keyMatchIn): a batch is a few keys.
      return hashes.map(() => rows);
    }, ONE_TURN);
    this.#orders = new DataLoader(async (ids) => {
      // An id no order can have (ids are safe integers) is not asked: it could fail the statement for every read in it.
      const asked = [...new Set(ids.filter((id) => Number.isSafeInteger(id)))];
      const found = new Map<number, OrderRecord>();
      if (asked.length > 0) {
        const [text, values] = asked.length === 1 ? [orders.order, asked] : [orders.ordersIn, [asked]];
        const { rows } = await guard(() => pool.query<OrderRow>(prepared(text, values, 'array')));
        for (const row of rows) found.set(row[0], rowToRecord(row));
      }
      return ids.map((id) => found.get(id));
    }, ONE_TURN);
  }

  /** The key with secret hash `keyHash` and its state at `at`, or null. */
  async findKey(keyHash: string, at: string): Promise<KeyMatch | null> {
    return keyMatchIn(await this.#keys.load(keyHash), keyHash, at);
  }

  /** The order with id `id`, unless there is none or it has been cancelled. */
  getOrder(id: number): Promise<OrderRecord | undefined> {
    return this.#orders.load(id);
  }
}
