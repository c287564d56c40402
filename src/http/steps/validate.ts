import type { RequestCheck } from '../request-check';
import type { Step } from './step';

/** validate: parameters and body against the document, inputs converted; 400 naming the field. Adds `inputs`. */
export function validate(requests: Pick<RequestCheck, 'inputs'>): Step {
  return (exchange, next) => {
    const { request, operation, method } = exchange;
    const raw = { method, path: request.path, query: request.query, headers: request.headers, body: exchange.body };
    exchange.inputs = requests.inputs(operation, raw, exchange.security?.keyName);
    return next();
  };
}
