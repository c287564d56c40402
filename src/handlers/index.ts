// Written by `npm run scaffold` from spec/documents.json; do not edit. The app serves each version listed here.
import type { ApiVersion } from '../contract/types';
import type { HandlerDefinitions } from '../http/define-handler';
import { v1Handlers } from './v1';
import { v2Handlers } from './v2';
import { v3Handlers } from './v3';

/** Every version, in spec/documents.json's order: the app serves each under its prefix. */
export const versions = ['v1', 'v2', 'v3'] as const satisfies readonly ApiVersion[];

/** The handler modules of each version. */
export const versionHandlers = { v1: v1Handlers, v2: v2Handlers, v3: v3Handlers } satisfies {
  [V in ApiVersion]: HandlerDefinitions<V>;
};
