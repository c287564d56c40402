import { ApiError } from '../../errors';
import { defineHandler } from '../../http/define-handler';
import { endpointNotFound } from '../../http/webhook-replies';

/**
 * The instant an RFC 3339 date-time names, as Date reads it: its date and time joined by `T`, a
 * lower-case `z` as `Z`, and a leap second as the last of its minute. Undefined beyond Date's range.
 */
function instantOf(dateTime: string): Date | undefined {
  const usual = dateTime
    .replace(/^(.{10})[Tt\s]/, '$1T')
    .replace(/z$/, 'Z')
    .replace(/^(.{17}):60/, '$1:59');
  const at = Date.parse(usual);
  return Number.isNaN(at) ? undefined : new Date(at);
}

/** replayWebhookEvents: POST /webhook-endpoints/{endpointId}/replay. Every event kept since `since` sent again, in the feed's order. */
export const replayWebhookEvents = defineHandler('v3', 'replayWebhookEvents', ({ store }) => async ({ path, body }) => {
  const since = instantOf(body.since);
  if (since === undefined)
    throw new ApiError('invalid_request', `since ${body.since} is outside the range of times the server can compare`);
  const events = await store.webhooks.replaySince(path.endpointId, since.toISOString());
  if (events === null) throw endpointNotFound(path.endpointId);
  return { status: 202, body: { events } };
});
