import type { RequestCheck } from '../request-check';
import type { Step } from './step';

/** read body: the body the operation declares, parsed; 415 for a media type it does not take, 400 for JSON that does not parse. Adds `body`. */
export function readBody(requests: Pick<RequestCheck, 'body'>): Step {
  return (exchange, next) => {
    exchange.body = requests.body(exchange.operation, exchange.request);
    return next();
  };
}
