import type { ErrorObject } from 'ajv';

/** One Ajv error as a sentence that names the field: `shipDate must match format "date-time"`. */
export function describeAjvError(error: ErrorObject, prefix = ''): string {
  const field = [prefix, ...error.instancePath.split('/').filter(Boolean)].filter(Boolean).join('.');
  if (error.keyword === 'additionalProperties') {
    const extra = String(error.params.additionalProperty);
    return `${field ? `${field}.` : ''}${extra} is not a known field`;
  }
  if (error.keyword === 'required') {
    const missing = String(error.params.missingProperty);
    return `${field ? `${field}.` : ''}${missing} is required`;
  }
  return `${field || 'value'} ${error.message ?? 'is invalid'}`;
}
