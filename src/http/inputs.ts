import type { IncomingHttpHeaders } from 'node:http';
import type { Operation } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { ApiError } from '../errors';
import { idProblem, parseId } from '../ids';

/** An operation's parameters by location, converted to their schema types. */
export interface OperationInputs {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
}

/** Reads an operation's inputs from a routed request: raw path and query strings, and its headers. */
export type InputReader = (raw: {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}) => OperationInputs;

/**
 * Compiles, once per operation, the reader of its declared path, query and header parameters:
 * each is taken from the raw request (never the validator's coerced copy) and converted by its
 * schema's type. Integers follow the one strict rule for ids (plain decimal, within the safe range:
 * `05`, `+5`, `5e0` and `2^53` are 400s, never rounded or reinterpreted); booleans are exactly
 * `true` or `false`. Headers keep the name the document gives them. Handlers so never parse a
 * string, and this is the only place the rule lives.
 */
export function compileInputReader(operation: Operation): InputReader {
  const parameters = ((operation.parameters ?? []) as OpenAPIV3.ParameterObject[]).filter((p) => p.in !== 'cookie');
  return (raw) => {
    const inputs: OperationInputs = { path: {}, query: {}, headers: {} };
    for (const parameter of parameters) {
      const source =
        parameter.in === 'header'
          ? raw.headers[parameter.name.toLowerCase()]
          : parameter.in === 'path'
            ? raw.params[parameter.name]
            : raw.query[parameter.name];
      if (source === undefined) continue;
      const value = convert(parameter, source);
      if (parameter.in === 'header') inputs.headers[parameter.name] = value;
      else if (parameter.in === 'path') inputs.path[parameter.name] = value;
      else inputs.query[parameter.name] = value;
    }
    return inputs;
  };
}

/** A raw parameter value as its schema's type; a 400 that names the parameter when it is not one. */
function convert(parameter: OpenAPIV3.ParameterObject, raw: unknown): unknown {
  const type = (parameter.schema as OpenAPIV3.SchemaObject | undefined)?.type;
  if (typeof raw !== 'string') return raw;
  switch (type) {
    case 'integer': {
      const value = parseId(raw);
      if (value === undefined) throw new ApiError('invalid_request', idProblem(parameter.name, raw));
      return value;
    }
    case 'boolean':
      if (raw === 'true' || raw === 'false') return raw === 'true';
      throw new ApiError('invalid_request', `${parameter.name} must be true or false, got "${raw}"`);
    default:
      return raw;
  }
}
