import type { OpenAPIV3 } from 'openapi-types';
import { documentOperations } from './document';

/** The spec extensions that describe a deprecation, on the operation object. */
interface DeprecationExtensions {
  'x-deprecated-at'?: unknown;
  'x-sunset'?: unknown;
  'x-deprecation-link'?: unknown;
}

/**
 * Builds the `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and `Link` response headers of every
 * operation the document marks `deprecated: true`, keyed by operationId. Throws at startup when a
 * deprecated operation lacks the date the headers need.
 */
export function deprecationHeaders(document: OpenAPIV3.Document): Map<string, Readonly<Record<string, string>>> {
  const result = new Map<string, Readonly<Record<string, string>>>();
  for (const operation of documentOperations<DeprecationExtensions>(document)) {
    if (!operation.deprecated || operation.operationId === undefined) continue;
    result.set(operation.operationId, Object.freeze(headersFor(operation.operationId, operation)));
  }
  return result;
}

function headersFor(operationId: string, operation: DeprecationExtensions): Record<string, string> {
  const deprecatedAt = date(operationId, 'x-deprecated-at', operation['x-deprecated-at']);
  if (deprecatedAt === undefined) {
    throw new Error(`operation ${operationId} is deprecated but has no x-deprecated-at date`);
  }
  const headers: Record<string, string> = { Deprecation: `@${Math.floor(deprecatedAt.getTime() / 1000)}` };
  const sunset = date(operationId, 'x-sunset', operation['x-sunset']);
  if (sunset !== undefined) headers.Sunset = sunset.toUTCString();
  const link = operation['x-deprecation-link'];
  if (typeof link === 'string' && link !== '') {
    const rels = sunset === undefined ? ['deprecation'] : ['deprecation', 'sunset'];
    headers.Link = rels.map((rel) => `<${link}>; rel="${rel}"`).join(', ');
  }
  return headers;
}

function date(operationId: string, name: string, value: unknown): Date | undefined {
  if (value === undefined) return undefined;
  const parsed = typeof value === 'string' || value instanceof Date ? new Date(value) : new Date(NaN);
  if (Number.isNaN(parsed.getTime())) {
    throw new Error(`operation ${operationId} has an invalid ${name}: ${JSON.stringify(value)}`);
  }
  return parsed;
}
