import type { ErrorObject } from 'ajv';

/** One Ajv error as a sentence that names the field: `shipDate must match format "date-time"`. */
export function describeAjvError(error: ErrorObject, prefix = ''): string {
  const field = [prefix, ...error.instancePath.split('/').filter(Boolean)].filter(Boolean).join('.');
  if (error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties') {
    const extra = String(error.params.additionalProperty ?? error.params.unevaluatedProperty);
    return `${field ? `${field}.` : ''}${extra} is not a known field`;
  }
  if (error.keyword === 'required') {
    const missing = String(error.params.missingProperty);
    return `${field ? `${field}.` : ''}${missing} is required`;
  }
  if (error.keyword === 'enum' && Array.isArray(error.params.allowedValues)) {
    return `${field || 'value'} must be one of ${error.params.allowedValues.map((value) => JSON.stringify(value)).join(', ')}`;
  }
  return `${field || 'value'} ${error.message ?? 'is invalid'}`;
}
