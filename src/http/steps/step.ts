import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MaybePromise } from '../../maybe-promise';
import type { Operation } from '../../openapi';
import type { ErrorReplies } from '../error-reply';
import type { Reply } from '../reply';
import type { RequestInputs } from '../request-check';
import type { RequestContext } from '../request-context';
import type { Security } from '../security';

/** The request as the dispatcher sees it: method and raw path, percent-encoding intact. */
export interface RoutedRequest {
  method: string;
  path: string;
  query: string;
  headers: IncomingMessage['headers'];
  /** The request's context: its id, and what each step learns of it (the version, the operation, the key). */
  context: RequestContext;
  /** The request body's bytes, when there were any; parsed only for an operation that declares a body. */
  body?: Buffer | undefined;
}

/**
 * One request on its way through its operation's steps: what the dispatcher matched, and what each
 * step adds for the steps after it, named by the step that adds it.
 */
export interface Exchange {
  readonly request: RoutedRequest;
  readonly res: ServerResponse;
  /** The operation the request matched. */
  readonly operation: Operation;
  /** The request's method, HEAD read as GET. */
  readonly method: string;
  /** read body: the body the operation gets (undefined for none). */
  body?: unknown;
  /** authenticate: the key that authenticated the request, its scopes and policies. */
  security?: Security;
  /** validate: the handler's inputs, checked against the document and converted. */
  inputs?: RequestInputs;
}

/**
 * One step of a request: its reply, made by the step itself (a refusal) or by the steps after it
 * (`next`), which the step may add to. At once when every step answers at once.
 */
export type Step = (exchange: Exchange, next: () => MaybePromise<Reply>) => MaybePromise<Reply>;

/**
 * Runs `run` as a request resumed later, after a wait: `Store.readTogether`, so that the requests
 * resumed together share one read transaction, as those dispatched together do.
 */
export type Resume = <T>(run: () => T) => T;

/**
 * Runs `steps` in order: each gets the rest as its `next`. Whatever a step throws, at once or later,
 * becomes its Error reply where it is thrown, so the steps before it see a reply like any other
 * (unwinding every step to one catch cost a small request a measurable share of its time:
 * docs/performance.md, "Where the time goes").
 *
 * A step that goes on only after a wait (the rate limit's count, admission's turn) calls `next`
 * after it has returned: the rest of the steps then run inside `resume`.
 */
export function runSteps(
  steps: readonly Step[],
  exchange: Exchange,
  errors: Pick<ErrorReplies, 'thrown'>,
  resume: Resume,
): MaybePromise<Reply> {
  const { context } = exchange.request;
  const from = (i: number): MaybePromise<Reply> => {
    const step = steps[i];
    if (step === undefined) throw new Error(`the last step of ${exchange.operation.operationId} went on to none`);
    let passed: MaybePromise<Reply> | undefined;
    /** Whether the step has returned: a `next` called after that resumes the request. */
    let returned = false;
    const rest = (): MaybePromise<Reply> => (passed = returned ? resume(() => from(i + 1)) : from(i + 1));
    try {
      const reply = step(exchange, rest);
      // What the steps after it answered is caught already: a step that hands it on as it is adds no catch.
      return reply instanceof Promise && reply !== passed ? reply.catch((err: unknown) => errors.thrown(err, context)) : reply;
    } catch (err) {
      return errors.thrown(err, context);
    } finally {
      returned = true;
    }
  };
  return from(0);
}
