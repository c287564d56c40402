import type { IncomingHttpHeaders } from 'node:http';
import type { OpenAPIV3 } from 'openapi-types';
import { ApiError } from '../errors';
import { idProblem, parseId } from '../ids';
import type { Operation } from '../openapi';

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
 * `true` or `false`. An absent parameter whose schema has a default gets it. Headers keep the
 * name the document gives them. Handlers so never parse a string, and this is the only place the
 * rule lives. A document that rejects undeclared query parameters gets a 400 naming the first.
 */
export function compileInputReader(
  operation: Operation,
  options: { undeclared: 'ignore' | 'reject' } = { undeclared: 'ignore' },
): InputReader {
  const parameters = operation.parameters.filter((p) => p.in !== 'cookie');
  const declaredQuery = new Set(parameters.filter((p) => p.in === 'query').map((p) => p.name));
  return (raw) => {
    if (options.undeclared === 'reject') {
      const unknown = Object.keys(raw.query).find((name) => !declaredQuery.has(name));
      if (unknown !== undefined) {
        const known = declaredQuery.size > 0 ? `; it takes ${[...declaredQuery].join(', ')}` : '; it takes none';
        throw new ApiError('invalid_request', `${unknown} is not a query parameter of this operation${known}`);
      }
    }
    const inputs: OperationInputs = { path: {}, query: {}, headers: {} };
    for (const parameter of parameters) {
      const source =
        parameter.in === 'header'
          ? raw.headers[parameter.name.toLowerCase()]
          : parameter.in === 'path'
            ? raw.params[parameter.name]
            : raw.query[parameter.name];
      const fallback: unknown = schemaOf(parameter)?.default;
      if (source === undefined && fallback === undefined) continue;
      const value = source === undefined ? fallback : convert(parameter, source);
      if (parameter.in === 'header') inputs.headers[parameter.name] = value;
      else if (parameter.in === 'path') inputs.path[parameter.name] = value;
      else inputs.query[parameter.name] = value;
    }
    return inputs;
  };
}

/** A raw parameter value as its schema's type; a 400 that names the parameter when it is not one. */
function convert(parameter: OpenAPIV3.ParameterObject, raw: unknown): unknown {
  const type = schemaOf(parameter)?.type;
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

/** A parameter's schema; a dereferenced document holds no `$ref`. */
function schemaOf(parameter: OpenAPIV3.ParameterObject): OpenAPIV3.SchemaObject | undefined {
  return parameter.schema === undefined || '$ref' in parameter.schema ? undefined : parameter.schema;
}
