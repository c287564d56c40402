import { quotasOf, rateLimitFields, verdictOf } from '../../src/keys';
import { formatPolicies, parsePolicies, type Policy } from '../../src/rate-policy';
import type { RateWindows } from '../../src/store';

// 2026-11-26T14:00:30Z: 30 s into a minute, 30 s into an hour, 14 h 30 s into a day.
const NOW = Date.UTC(2026, 10, 26, 14, 0, 30) / 1000;
const windows = (used: Partial<Record<'s' | 'min' | 'h' | 'day', number>>): RateWindows => ({
  now: NOW,
  s: { start: NOW, used: used.s ?? 0 },
  min: { start: NOW - 30, used: used.min ?? 0 },
  h: { start: NOW - 30, used: used.h ?? 0 },
  day: { start: NOW - (NOW % 86_400), used: used.day ?? 0 },
});

test('policies parse in the order given, format back as they were written, and are kept parsed', () => {
  const policies = parsePolicies('--rate-limit', ['600/min', ' 100000/day ']);

  expect(policies).toEqual([
    { quota: 600, unit: 'min' },
    { quota: 100000, unit: 'day' },
  ]);
  expect(formatPolicies(policies)).toBe('600/min,100000/day');
  expect(parsePolicies('--rate-limit', ['none'])).toBe('none');
});

test('an admitted request is told the tightest policy: the one with least left, and the seconds until its window ends', () => {
  const policies: Policy[] = [
    { quota: 600, unit: 'min' },
    { quota: 1000, unit: 'day' },
  ];

  expect(verdictOf(policies, true, windows({ min: 10, day: 995 }))).toEqual({
    admitted: true,
    tightest: { unit: 'day', remaining: 5, reset: 86_400 - (14 * 3600 + 30) },
  });
  expect(verdictOf(policies, true, windows({ min: 599, day: 995 }))).toEqual({
    admitted: true,
    tightest: { unit: 'min', remaining: 1, reset: 30 },
  });
});

test('a refused request is told to wait until every spent window has ended, and never less than a second', () => {
  const policies: Policy[] = [
    { quota: 5, unit: 's' },
    { quota: 60, unit: 'min' },
    { quota: 100, unit: 'h' },
  ];

  // The spent policy whose window ends last is the tightest: nothing left in it until then.
  expect(verdictOf(policies, false, windows({ s: 5, min: 3, h: 10 }))).toEqual({
    admitted: false,
    retryAfter: 1,
    tightest: { unit: 's', remaining: 0, reset: 1 },
  });
  expect(verdictOf(policies, false, windows({ s: 5, min: 60, h: 10 }))).toEqual({
    admitted: false,
    retryAfter: 30,
    tightest: { unit: 'min', remaining: 0, reset: 30 },
  });
  expect(verdictOf(policies, false, windows({ s: 5, min: 60, h: 100 }))).toEqual({
    admitted: false,
    retryAfter: 3570,
    tightest: { unit: 'h', remaining: 0, reset: 3570 },
  });
  expect(quotasOf(policies)).toEqual({ s: 5, min: 60, h: 100 });
  expect(quotasOf(policies)).toBe(quotasOf(policies));
});

test('the RateLimit fields: every policy by its unit, quota and window; the tightest with what is left and its reset', () => {
  const policies: Policy[] = [
    { quota: 600, unit: 'min' },
    { quota: 100_000, unit: 'day' },
  ];

  const admitted = verdictOf(policies, true, windows({ min: 1, day: 1 }));
  const refused = verdictOf(policies, false, windows({ min: 600, day: 700 }));

  expect(rateLimitFields(policies, admitted)).toEqual({
    'RateLimit-Policy': '"min";q=600;w=60, "day";q=100000;w=86400',
    RateLimit: '"min";r=599;t=30',
  });
  expect(rateLimitFields(policies, refused)).toEqual({
    'RateLimit-Policy': '"min";q=600;w=60, "day";q=100000;w=86400',
    RateLimit: '"min";r=0;t=30',
  });
});
