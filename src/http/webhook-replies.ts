import { ApiError } from '../errors';
import type { EndpointOutcome } from '../webhooks/endpoints';

/** The 404 of an endpoint id no endpoint has. */
export function endpointNotFound(id: string): ApiError {
  return new ApiError('webhook_endpoint_not_found', `Webhook endpoint ${id} was not found`);
}

/** What making or changing an endpoint came to, as its reply's body: a URL the rules refuse is a 400 naming the rule. */
export function endpointResult<T>(id: string, outcome: EndpointOutcome<T>): T {
  if ('done' in outcome) return outcome.done;
  if ('refused' in outcome) throw new ApiError('invalid_request', outcome.refused);
  throw endpointNotFound(id);
}
