export { createOpenApi, type OpenApi, type Operation, type ParsedRequest, type RawRequest } from './adapter';
export { createContractAjv, customizeAjv, validatorsCompiled } from './ajv';
export { mediaTypeOf } from './request-validation';
export type { UndeclaredQuery } from './router';
