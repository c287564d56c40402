import type pg from 'pg';
import Cursor from 'pg-cursor';
import { etagOf, prefetched, rowToListed } from '../core';
import { BEFORE_FIRST_ID, type ListedRow, type StoreSql } from '../sql';
import type { ListedOrder, OrderSnapshot } from '../types';
import { guard, translate } from './dialect';

/**
 * A snapshot of the order list on a connection of its own: one REPEATABLE READ transaction for the
 * ETag and every row, read through a cursor however long the client takes; a list that fits in
 * the first read gives its connection back at once.
 */
export function openSnapshot(pool: pg.Pool, SQL: StoreSql, prefetch: number): Promise<OrderSnapshot> {
  return guard(async () => {
    const client = await pool.connect();
    let cursor: Cursor<ListedRow> | undefined;
    let done = false;
    // Gives the connection back once: ended cleanly for reuse, or destroyed after a failure.
    const finish = async (failure?: unknown): Promise<void> => {
      if (done) return;
      done = true;
      if (failure !== undefined) {
        client.release(true);
        return;
      }
      try {
        await cursor?.close();
        await client.query('COMMIT');
        client.release();
      } catch (err) {
        client.release(err instanceof Error ? err : true);
      }
    };
    try {
      // One snapshot for the ETag and every row, however long the client takes to read them.
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const meta = await client.query<{ store_id: string; revision: number }>(SQL.meta);
      const etag = etagOf(meta.rows[0]);
      // The whole list, from before the first id, with no bound (LIMIT NULL).
      const open = client.query(new Cursor<ListedRow>(SQL.snapshot, [BEFORE_FIRST_ID, null], { rowMode: 'array' }));
      cursor = open;
      // Most lists fit in the first read: then the connection goes back at once.
      const first = await open.read(prefetch + 1);
      const whole = prefetched(etag, first, prefetch);
      if (whole !== undefined) {
        await finish();
        return whole;
      }
      let pending: ListedRow[] = first;
      return {
        etag,
        read: async (max: number): Promise<ListedOrder[]> => {
          if (pending.length < max && !done) {
            try {
              const more = await open.read(max - pending.length);
              // A cursor gives fewer rows than asked for only at the list's end.
              if (more.length < max - pending.length) await finish();
              pending = pending.concat(more);
            } catch (err) {
              await finish(err);
              throw translate(err);
            }
          }
          const chunk = pending.slice(0, max);
          pending = pending.slice(max);
          return chunk.map(rowToListed);
        },
        exhausted: () => done && pending.length === 0,
        close: () => finish(),
      };
    } catch (err) {
      await finish(err);
      throw err;
    }
  });
}
