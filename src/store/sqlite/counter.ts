import type { RateUnit } from '../../rate-policy';
import { drive } from '../dialect';
import { countAllSteps, rateSql, type CountRequest } from '../rates';
import type { RateCount } from '../types';
import { sqliteDialect } from './dialect';
import { UnsyncedBatches } from './unsynced';
import type { Writer } from './writer';

/** The count's statements, by SQLite's clock. */
const RATE_SQL = rateSql(sqliteDialect.clock);

/**
 * The rate-limit count of a SQLite store (../rates.ts): the requests that arrive together are
 * counted in one transaction of a connection of its own whose commits are not synced
 * (./unsynced.ts), each key's requests by one statement where all of them fit (countAllSteps), so
 * that the batch is as exact as one statement each. A power cut may lose the last counts, and so
 * admit up to a window's quota again.
 */
export class Counter {
  private readonly counts: UnsyncedBatches<CountRequest, RateCount>;

  constructor(writer: Writer) {
    this.counts = new UnsyncedBatches(writer, (requests, connection) => drive(countAllSteps(RATE_SQL, requests), connection));
  }

  count(keyName: string, quotas: Partial<Record<RateUnit, number>>): Promise<RateCount> {
    return this.counts.submit({ keyName, quotas });
  }

  close(): void {
    this.counts.close();
  }
}
