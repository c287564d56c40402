import { DEFAULT_RETRY_SCHEDULE, nextWait, parseSchedule, retryAfterMs } from '../../src/webhooks/schedule';

test('the schedule as shipped: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h, about three days in all', () => {
  const hours = DEFAULT_RETRY_SCHEDULE.map((ms) => ms / 3_600_000);
  expect(DEFAULT_RETRY_SCHEDULE.slice(0, 3)).toEqual([5_000, 300_000, 1_800_000]);
  expect(hours.slice(3)).toEqual([2, 5, 10, 14, 20, 24]);
  const total = DEFAULT_RETRY_SCHEDULE.reduce((sum, wait) => sum + wait, 0) / 86_400_000;
  expect(total).toBeGreaterThan(3);
  expect(total).toBeLessThan(3.5);
});

test('each wait is stretched by up to 10% at random, a Retry-After waits at least as asked, and the schedule ends', () => {
  expect(nextWait(1, DEFAULT_RETRY_SCHEDULE, 0)).toBe(5_000);
  expect(nextWait(1, DEFAULT_RETRY_SCHEDULE, 0.999)).toBe(5_500);
  expect(nextWait(2, DEFAULT_RETRY_SCHEDULE, 0.5)).toBe(315_000);
  expect(nextWait(9, DEFAULT_RETRY_SCHEDULE, 0)).toBe(86_400_000);
  expect(nextWait(10, DEFAULT_RETRY_SCHEDULE, 0)).toBeUndefined();
  // Retry-After: 120 after the first failure waits 120 s, not 5; a shorter one does not shorten the wait.
  expect(nextWait(1, DEFAULT_RETRY_SCHEDULE, 0, 120_000)).toBe(120_000);
  expect(nextWait(2, DEFAULT_RETRY_SCHEDULE, 0, 1_000)).toBe(300_000);
  // Past a day, a Retry-After is not believed: the schedule's wait applies.
  expect(nextWait(1, DEFAULT_RETRY_SCHEDULE, 0, 10 * 86_400_000)).toBe(86_400_000);
});

test('PETSTORE_WEBHOOK_RETRY_SCHEDULE is durations separated by commas, and a wrong one says which part', () => {
  expect(parseSchedule('1s,2s,5s')).toEqual([1_000, 2_000, 5_000]);
  expect(parseSchedule('250ms, 1m,2h,1d')).toEqual([250, 60_000, 7_200_000, 86_400_000]);
  expect(parseSchedule('1s,soon')).toEqual({ problem: '"soon" is not a duration such as 500ms, 5s, 5m, 2h or 1d' });
  expect(parseSchedule('')).toEqual({ problem: '"" is not a duration such as 500ms, 5s, 5m, 2h or 1d' });
  expect(parseSchedule(Array.from({ length: 51 }, () => '1s').join(','))).toEqual({ problem: 'holds more than 50 waits' });
});

test('Retry-After in seconds or as an HTTP date', () => {
  const now = Date.parse('2026-11-27T10:00:00Z');
  expect(retryAfterMs('30', now)).toBe(30_000);
  expect(retryAfterMs('Fri, 27 Nov 2026 10:02:00 GMT', now)).toBe(120_000);
  expect(retryAfterMs('Fri, 27 Nov 2026 09:00:00 GMT', now)).toBe(0);
  expect(retryAfterMs('later', now)).toBeUndefined();
  expect(retryAfterMs(undefined, now)).toBeUndefined();
});
