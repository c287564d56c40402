export { KEY_PREFIX, generateKey, hashKey, keyNameProblem, parseBearer } from './keys';
export { bearerCheck, type BearerResult } from './bearer';
