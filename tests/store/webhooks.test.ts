import type { Store } from '../../src/store';
import type { NewEndpoint } from '../../src/store/types';
import { eachStore } from '../helpers/stores';

// Webhook endpoints in each store: made, read, paged, changed, rotated and removed; leased to one
// instance at a time, whose every write holds only while its lease does; retries and the log.

/** Seconds of a lease in these tests. */
const LEASE = 60;

const made = async (store: Store, id: string, overrides: Partial<NewEndpoint> = {}) =>
  store.webhooks.createEndpoint({
    id,
    url: `https://hooks.example.com/${id}`,
    eventTypes: null,
    description: null,
    secret: `whsec_${Buffer.alloc(24, id).toString('base64')}`,
    createdAt: '2026-11-27T10:00:00.000Z',
    cursor: await store.latestEventPosition(),
    ...overrides,
  });

eachStore((suite) => {
  const store = (): Store => suite.store;

  test('an endpoint is made enabled, read, paged in the order made, changed, rotated and removed', async () => {
    const first = await made(store(), 'we_01', { eventTypes: ['order.created', 'order.shipped'], description: 'fulfilment' });
    expect(first).toEqual({
      id: 'we_01',
      url: 'https://hooks.example.com/we_01',
      eventTypes: ['order.created', 'order.shipped'],
      description: 'fulfilment',
      status: 'enabled',
      disabledReason: null,
      createdAt: '2026-11-27T10:00:00.000Z',
      secrets: [expect.stringMatching(/^whsec_/)],
      cursor: await store().latestEventPosition(),
      failingSince: null,
    });
    await made(store(), 'we_02');
    await made(store(), 'we_03');
    expect(await store().webhooks.getEndpoint('we_01')).toEqual(first);
    expect(await store().webhooks.getEndpoint('we_none')).toBeNull();
    expect((await store().webhooks.listEndpoints('', 2)).map((each) => each.id)).toEqual(['we_01', 'we_02']);
    expect((await store().webhooks.listEndpoints('we_02', 2)).map((each) => each.id)).toEqual(['we_03']);

    const changed = await store().webhooks.updateEndpoint('we_01', {
      url: 'https://hooks.example.com/moved',
      eventTypes: null,
      description: null,
    });
    expect(changed).toMatchObject({ url: 'https://hooks.example.com/moved', eventTypes: null, description: null, status: 'enabled' });
    expect(await store().webhooks.updateEndpoint('we_01', { status: 'disabled' })).toMatchObject({
      status: 'disabled',
      disabledReason: 'disabled by hand',
      url: 'https://hooks.example.com/moved',
    });
    expect(await store().webhooks.updateEndpoint('we_01', { status: 'enabled' })).toMatchObject({
      status: 'enabled',
      disabledReason: null,
    });
    expect(await store().webhooks.updateEndpoint('we_none', { status: 'enabled' })).toBeNull();

    // A rotated-out secret signs beside the new one until its time is up, then no more.
    const rotated = await store().webhooks.rotateEndpointSecret(
      'we_02',
      'whsec_bmV3IHNlY3JldCBvZiB0d2VudHktZm91cg==',
      '2999-01-01T00:00:00.000Z',
    );
    expect(rotated?.secrets).toEqual([
      'whsec_bmV3IHNlY3JldCBvZiB0d2VudHktZm91cg==',
      `whsec_${Buffer.alloc(24, 'we_02').toString('base64')}`,
    ]);
    await store().webhooks.rotateEndpointSecret('we_02', 'whsec_dGhpcmQgc2VjcmV0IG9mIHR3ZW50eS1mb3VyIQ==', '2000-01-01T00:00:00.000Z');
    expect((await store().webhooks.getEndpoint('we_02'))?.secrets).toEqual(['whsec_dGhpcmQgc2VjcmV0IG9mIHR3ZW50eS1mb3VyIQ==']);

    expect(await store().webhooks.removeEndpoint('we_02')).toBe(true);
    expect(await store().webhooks.removeEndpoint('we_02')).toBe(false);
    expect(await store().webhooks.getEndpoint('we_02')).toBeNull();
  });

  test('an endpoint is leased to one instance at a time, and every write of a delivery holds only while its lease does', async () => {
    await made(store(), 'we_a');
    await made(store(), 'we_b');
    const other = await suite.fresh.another();
    try {
      // Two instances claim at once: each endpoint goes to exactly one of them.
      const [mine, theirs] = await Promise.all([
        store().webhooks.claimEndpoints('one', 10, LEASE),
        other.webhooks.claimEndpoints('two', 10, LEASE),
      ]);
      const ids = [...mine, ...theirs].map((each) => each.id).sort();
      expect(ids).toEqual(['we_a', 'we_b']);
      const [holder, other_] = mine.length > 0 ? (['one', 'two'] as const) : (['two', 'one'] as const);
      const held = (mine.length > 0 ? mine : theirs)[0]!.id;

      expect(await store().webhooks.renewLease(held, holder, LEASE)).toBe(LEASE);
      expect(await store().webhooks.renewLease(held, other_, LEASE)).toBeNull();
      const position = await store().latestEventPosition();
      const moved = { ...position, seq: position.seq + 1 };
      expect(await store().webhooks.advanceCursor(held, other_, position, moved)).toBe(false);
      expect(await store().webhooks.advanceCursor(held, holder, moved, position)).toBe(false); // not where it is
      expect(await store().webhooks.advanceCursor(held, holder, position, moved)).toBe(true);
      expect((await store().webhooks.getEndpoint(held))?.cursor).toEqual(moved);
      // Claiming again answers what it holds, and takes nothing another holds.
      expect((await store().webhooks.claimEndpoints(holder, 10, LEASE)).map((each) => each.id)).toContain(held);
      expect((await store().webhooks.claimEndpoints(other_, 10, LEASE)).map((each) => each.id)).not.toContain(held);

      await store().webhooks.releaseLease(held, holder);
      expect((await store().webhooks.claimEndpoints(other_, 10, LEASE)).map((each) => each.id)).toContain(held);
      expect(await store().webhooks.renewLease(held, holder, LEASE)).toBeNull();

      // A disabled endpoint is neither claimed nor renewed: its holder stops at its next attempt.
      expect(await store().webhooks.disableEndpoint(held, holder, 'the receiver answered 410 Gone')).toBe(false);
      expect(await store().webhooks.disableEndpoint(held, other_, 'the receiver answered 410 Gone')).toBe(true);
      expect(await store().webhooks.getEndpoint(held)).toMatchObject({
        status: 'disabled',
        disabledReason: 'the receiver answered 410 Gone',
      });
      expect(await store().webhooks.renewLease(held, other_, LEASE)).toBeNull();
      expect((await store().webhooks.claimEndpoints(other_, 10, LEASE)).map((each) => each.id)).not.toContain(held);
    } finally {
      await other.close();
    }
  });

  test('a delivered attempt is logged and the cursor moved past its event in one write; the line is kept when the move is refused', async () => {
    await made(store(), 'we_d');
    const [held] = await store().webhooks.claimEndpoints('one', 10, LEASE);
    const from = held!.cursor;
    const to = { ...from, seq: from.seq + 1 };
    const line = (eventId: string) => ({
      eventId,
      attempt: 1,
      at: '2026-11-27T10:00:00.000Z',
      status: 204,
      error: null,
      durationMs: 3,
      outcome: 'delivered' as const,
    });
    expect(await store().webhooks.logAndAdvance('we_d', 'one', line('evt_a'), from, to)).toBe(true);
    expect((await store().webhooks.getEndpoint('we_d'))?.cursor).toEqual(to);
    // Not the holder, or the cursor no longer where it was read: not moved, and the attempt still logged.
    expect(await store().webhooks.logAndAdvance('we_d', 'two', line('evt_b'), to, { ...to, seq: to.seq + 1 })).toBe(false);
    expect(await store().webhooks.logAndAdvance('we_d', 'one', line('evt_c'), from, to)).toBe(false);
    expect((await store().webhooks.getEndpoint('we_d'))?.cursor).toEqual(to);
    expect((await store().webhooks.attempts('we_d', undefined, 10)).map((each) => each.eventId)).toEqual(['evt_c', 'evt_b', 'evt_a']);
  });

  test('retries wait for their time, by holder only; a run of failures keeps its start; the log is newest first', async () => {
    await made(store(), 'we_r');
    await store().webhooks.claimEndpoints('one', 10, LEASE);
    const retry = { eventId: 'evt_1', body: '{"id":"evt_1"}', attempts: 1, nextAt: '2026-11-27T10:00:05.000Z' };
    expect(await store().webhooks.scheduleRetry('we_r', 'two', retry)).toBe(false);
    expect(await store().webhooks.scheduleRetry('we_r', 'one', retry)).toBe(true);
    expect(await store().webhooks.scheduleRetry('we_r', 'one', { ...retry, eventId: 'evt_2', nextAt: '2026-11-27T10:00:09.000Z' })).toBe(
      true,
    );
    // A second failure of the same event moves its retry on.
    expect(await store().webhooks.scheduleRetry('we_r', 'one', { ...retry, attempts: 2, nextAt: '2026-11-27T10:05:00.000Z' })).toBe(true);
    expect(await store().webhooks.dueRetries('we_r', '2026-11-27T10:00:10.000Z', 10)).toEqual([
      { eventId: 'evt_2', body: '{"id":"evt_1"}', attempts: 1, nextAt: '2026-11-27T10:00:09.000Z' },
    ]);
    expect(await store().webhooks.nextRetryAt('we_r')).toBe('2026-11-27T10:00:09.000Z');
    expect(await store().webhooks.dropRetry('we_r', 'one', 'evt_2')).toBe(true);
    expect(await store().webhooks.nextRetryAt('we_r')).toBe('2026-11-27T10:05:00.000Z');

    expect(await store().webhooks.noteFailure('we_r', 'one', '2026-11-27T10:00:00.000Z')).toBe('2026-11-27T10:00:00.000Z');
    expect(await store().webhooks.noteFailure('we_r', 'one', '2026-11-27T11:00:00.000Z')).toBe('2026-11-27T10:00:00.000Z');
    expect(await store().webhooks.noteFailure('we_r', 'two', null)).toBe(false);
    expect(await store().webhooks.noteFailure('we_r', 'one', null)).toBeNull();

    for (const [attempt, outcome] of [
      [1, 'retrying'],
      [2, 'delivered'],
    ] as const) {
      await store().webhooks.logAttempt('we_r', {
        eventId: 'evt_1',
        attempt,
        at: `2026-11-27T10:0${attempt}:00.000Z`,
        status: attempt === 1 ? 500 : 204,
        error: null,
        durationMs: 12.5,
        outcome,
      });
    }
    await store().webhooks.logAttempt('we_r', {
      eventId: 'evt_3',
      attempt: 1,
      at: '2026-11-27T10:03:00.000Z',
      status: null,
      error: 'ECONNREFUSED',
      durationMs: 1,
      outcome: 'retrying',
    });
    const log = await store().webhooks.attempts('we_r', undefined, 2);
    expect(log.map(({ eventId, attempt, status, error, outcome }) => ({ eventId, attempt, status, error, outcome }))).toEqual([
      { eventId: 'evt_3', attempt: 1, status: null, error: 'ECONNREFUSED', outcome: 'retrying' },
      { eventId: 'evt_1', attempt: 2, status: 204, error: null, outcome: 'delivered' },
    ]);
    expect((await store().webhooks.attempts('we_r', log[1]!.seq, 10)).map((each) => each.status)).toEqual([500]);

    // Removing the endpoint removes its retries and its log.
    await store().webhooks.removeEndpoint('we_r');
    expect(await store().webhooks.attempts('we_r', undefined, 10)).toEqual([]);
    expect(await store().webhooks.nextRetryAt('we_r')).toBeNull();
  });
});
