export { createOpenApi, type OpenApi, type Operation, type ParsedRequest, type RawRequest } from './adapter';
export { statusMatch } from './by-status';
export { ajvCustomizerFor, createContractAjv, customizeAjv, validatorsCompiled, validatorsMade } from './ajv';
export { asOpenApi31, asValidatedDocument, openApiLineOf, type OpenApiLine } from './dialect';
export { mediaTypeOf } from './request-validation';
export type { UndeclaredQuery } from './router';
export { precompiledModule, recordValidators } from './precompiled';
export { definitionsFile, recordDefinitions } from './dereferenced';
