import type { Express } from 'express';
import request from 'supertest';
import type { ApiVersion } from '../../src/contract/types';
import { expectConforms } from './contract';
import type { StoreSuite } from './stores';

/** A page of the feed, as a client reads it. */
export interface FeedPage {
  events: Array<{ type: string; orderId: number; occurredAt: string; order?: Record<string, unknown> }>;
  nextCursor: string;
}

/**
 * Reads a version's feed on from `cursor` (from the oldest without one) until `count` events have
 * come, waiting for each: on PostgreSQL an event shows once every older transaction of the
 * cluster has ended, which another test's import can delay for a moment.
 */
export async function readEvents(
  app: Express,
  s: Pick<StoreSuite, 'auth'>,
  count: number,
  cursor?: string,
  version: ApiVersion = 'v2',
): Promise<{ events: FeedPage['events']; cursor: string }> {
  const events: FeedPage['events'] = [];
  let at = cursor;
  for (let round = 0; events.length < count; round += 1) {
    if (round === 20) throw new Error(`the feed gave ${events.length} events, not ${count}: ${JSON.stringify(events)}`);
    const res = await request(app)
      .get(`/${version}/store/order-events`)
      .query({ wait: 5, limit: 1000, ...(at === undefined ? {} : { after: at }) })
      .set(s.auth);
    expect(res.status).toBe(200);
    await expectConforms(res, 'listOrderEvents', version);
    const page = res.body as FeedPage;
    events.push(...page.events);
    at = page.nextCursor;
  }
  if (at === undefined) throw new Error('no page was read');
  return { events, cursor: at };
}

/**
 * Where the feed stands after the `count` events a test's own set-up made, read from the oldest:
 * on PostgreSQL, `from=latest` right after an import may come before the import's events, which
 * show once every older transaction of the cluster has ended; reading them waits for that.
 */
export async function cursorAfter(app: Express, s: Pick<StoreSuite, 'auth'>, count: number, version: ApiVersion = 'v2'): Promise<string> {
  return (await readEvents(app, s, count, undefined, version)).cursor;
}
