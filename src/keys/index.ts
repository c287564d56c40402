export { KEY_PREFIX, generateKey, hashKey, keyNameProblem, parseBearer } from './keys';
export { bearerCheck, type BearerResult, type KeyRefusal } from './bearer';
export { expiryOf, laterBy, type ExpiryOptions } from './expiry';
export { DEFAULT_SCOPES, missingScopes, parseScopes } from './scopes';
export { quotasOf, rateLimitFields, verdictOf, type RateLimitFields, type RateVerdict } from './rate-limit';
