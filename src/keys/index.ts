export { KEY_PREFIX, generateKey, hashKey, keyNameProblem, parseBearer } from './keys';
