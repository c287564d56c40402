import type { OpenAPIV3 } from 'openapi-types';
import { errorCheck, responseProblem } from '../contract/conformance';
import { deprecationHeaders } from '../contract/deprecation';
import type { Logger } from '../logger';
import type { OpenApi, Operation } from '../openapi';
import type { ErrorReplies } from './error-reply';
import { compileItemWriter, type ItemWriter } from './item-writer';
import { isFixed, type Reply } from './reply';
import type { RequestContext } from './request-context';

/** Whom the check tells about a reply it refused, besides the log. */
export interface ReplyCheckOptions {
  readonly api: OpenApi;
  readonly document: OpenAPIV3.Document;
  readonly errors: ErrorReplies;
  readonly logger: Logger;
  /** Called for every reply the check stopped, streamed or not. */
  readonly onViolation: (operationId: string) => void;
  /** Called for every request to an operation the document marks deprecated. */
  readonly onDeprecatedCall: (operationId: string) => void;
}

/** A reply, or an item of a streamed one, that the contract refused, and what the client got instead. */
export interface Violation {
  readonly status: number;
  /** What is wrong with it, as the validator says. */
  readonly problem: string;
  /** What the client got instead: a 500, or a connection closed mid-stream. */
  readonly outcome: 'sending 500 instead' | 'connection closed';
  /** The streamed item that broke the contract, when one did. */
  readonly item?: unknown;
}

/** The check of every reply against the contract, before it is sent. */
export interface ReplyCheck {
  /**
   * The reply to send in place of `reply`: itself, with its operation's deprecation headers, when
   * it conforms; else the logged, counted 500 (a refused stream is closed first). A streamed array
   * is checked here by its status and headers, and item by item as it is written (itemWriter).
   */
  check(context: RequestContext, reply: Reply): Reply | Promise<Reply>;
  /** The writer that checks and writes each item of a streamed array reply, if the status declares an array. */
  itemWriter(operation: Operation | undefined, status: number): ItemWriter | undefined;
  /** Logs and counts a reply the contract refused. */
  refused(context: RequestContext, violation: Violation): void;
  /** The 500 sent in place of a refused reply, with its operation's deprecation headers. */
  internal(operation: Operation | undefined): Reply;
  /** A reply with its operation's deprecation headers, when the document marks it deprecated. */
  withDeprecation(reply: Reply, operation: Operation | undefined): Reply;
}

/** Builds the reply check of a document: its response checks, its array item writers, and what it remembers passed. */
export function createReplyCheck(options: ReplyCheckOptions): ReplyCheck {
  const { api, document, errors, logger } = options;
  const deprecations = deprecationHeaders(document);
  const validateError = errorCheck(api, document);
  const items = compileArrayItems(api);
  const passed = createPassedReplies();

  const deprecationOf = (operation: Operation | undefined): Readonly<Record<string, string>> | undefined =>
    operation === undefined ? undefined : deprecations.get(operation.operationId);
  const withDeprecation = (reply: Reply, operation: Operation | undefined): Reply => decorated(reply, deprecationOf(operation));

  const refused: ReplyCheck['refused'] = (context, { status, problem, outcome, item }) => {
    const operationId = context.operation?.operationId ?? 'none';
    options.onViolation(operationId);
    const itemId = typeof item === 'object' && item !== null && 'id' in item ? item.id : undefined;
    logger.error(
      { requestId: context.id, operationId, status, problem, ...(itemId === undefined ? {} : { itemId }) },
      `response violates the contract; ${outcome}`,
    );
  };

  const internal = (operation: Operation | undefined): Reply => withDeprecation(errors.internal, operation);

  /** The reply's problem, or null: at once for a reply one like it already passed. */
  const problemOf = (operation: Operation | undefined, handled: Reply, reply: Reply): string | null => {
    if (reply.stream && !items.has(itemKey(operation, reply.status))) {
      return `status ${reply.status} of ${operation?.operationId ?? 'none'} is not a JSON array that can be streamed`;
    }
    const memory = passed.place(operation, handled);
    if (memory?.set.has(memory.key)) return null;
    const problem = responseProblem(api, validateError, operation, reply);
    if (problem === null) memory?.set.add(memory.key);
    return problem;
  };

  return {
    check: (context, handled) => {
      const { operation } = context;
      const deprecation = deprecationOf(operation);
      if (operation !== undefined && deprecation !== undefined) options.onDeprecatedCall(operation.operationId);
      const reply = decorated(handled, deprecation);
      const problem = problemOf(operation, handled, reply);
      if (problem === null) return reply;
      const refuse = (): Reply => {
        refused(context, { status: reply.status, problem, outcome: 'sending 500 instead' });
        return internal(operation);
      };
      return reply.stream ? reply.stream.close().then(refuse) : refuse();
    },
    itemWriter: (operation, status) => items.get(itemKey(operation, status)),
    refused,
    internal,
    withDeprecation,
  };
}

/** A reply with an operation's deprecation headers added, when it has them. */
function decorated(reply: Reply, deprecation: Readonly<Record<string, string>> | undefined): Reply {
  return deprecation === undefined ? reply : { ...reply, headers: { ...reply.headers, ...deprecation } };
}

/** The key of a status's item writer: "operationId status". */
function itemKey(operation: Operation | undefined, status: number | string): string {
  return `${operation?.operationId ?? 'none'} ${status}`;
}

/**
 * For every response of the document whose JSON body is an array, the writer of its items, keyed
 * by "operationId status": it checks each item against the schema, formats included, and writes
 * exactly the schema's properties, so a streamed array is held to the same rules as any other reply.
 */
function compileArrayItems(api: OpenApi): Map<string, ItemWriter> {
  const items = new Map<string, ItemWriter>();
  for (const operation of api.operations) {
    for (const [status, response] of Object.entries(operation.responses)) {
      const schema = response.content?.['application/json']?.schema;
      if (schema === undefined || '$ref' in schema || schema.type !== 'array' || '$ref' in schema.items) continue;
      items.set(itemKey(operation, status), compileItemWriter(schema.items, api.ajv));
    }
  }
  return items;
}

/**
 * The replies whose check cannot come out differently the next time, because one like them
 * passed: a fixed reply (it never changes), and an Error reply, whose kind (operation, status,
 * code, headers) fixes everything but `message`, which the Error schema types as any string.
 */
interface PassedReplies {
  /** Where a reply like this one is remembered once it has passed, and under what key; undefined for one that cannot be vouched for. */
  place(operation: Operation | undefined, reply: Reply): { set: Set<string>; key: string } | undefined;
}

function createPassedReplies(): PassedReplies {
  const errors = new Set<string>();
  const fixed = new WeakMap<Reply, Set<string>>();
  return {
    place: (operation, reply) => {
      if (isFixed(reply)) {
        let set = fixed.get(reply);
        if (set === undefined) fixed.set(reply, (set = new Set()));
        return { set, key: operation?.operationId ?? '-' };
      }
      if (reply.error === undefined) return undefined;
      return {
        set: errors,
        key: `${operation?.operationId ?? '-'} ${reply.status} ${reply.error.code} ${JSON.stringify(reply.headers ?? {})}`,
      };
    },
  };
}
