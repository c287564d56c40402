import { isRecord } from '../../records';
import { SCOPES_EXTENSION } from '../scopes';

/** How much a difference between a released document and its successor matters to consumers. */
export type ChangeClass = 'breaking' | 'additive' | 'docs';

/** What the diff library found at one place, as the rules read it. */
export interface RawChange {
  action: 'add' | 'remove' | 'replace' | 'rename';
  /** Where in the document, as keys from its root. */
  path: ReadonlyArray<string | number>;
  before?: unknown;
  after?: unknown;
  /** The library's own classification, the fallback when no rule of ours applies. */
  libraryType: 'breaking' | 'non-breaking' | 'annotation' | 'unclassified' | 'deprecated';
}

/** One named rule's verdict on a change. */
export interface Verdict {
  rule: string;
  class: ChangeClass;
}

/** Keywords that only describe: changing them changes no request or response. */
const DOCS_KEYWORDS = new Set(['description', 'summary', 'title', 'example', 'examples', 'externalDocs', 'tags', 'contact', 'license']);
/** Schema keywords that bound a value; any change to them in a response is breaking, as is tightening them in a request. */
const BOUNDS = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'uniqueItems',
  'multipleOf',
  'minProperties',
  'maxProperties',
]);
const LOWER_BOUNDS = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties']);
const UPPER_BOUNDS = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties']);

/**
 * The rule table: which named rule a change falls under, and its class. The rules follow
 * DESIGN.md's list, modelled on oasdiff's checks; where none applies, the diff library's own
 * classification is used (`library-*`). Returns undefined for what is not a change of the
 * contract at all (the document's own version number).
 */
export function classify(change: RawChange): Verdict | undefined {
  const { path } = change;
  if (path[0] === 'info') return path[1] === 'version' ? undefined : { rule: 'docs-changed', class: 'docs' };
  if (path.some((key) => typeof key === 'string' && key.startsWith('x-')) && path[0] !== 'paths') {
    return { rule: 'extension-changed', class: 'docs' };
  }
  if (path[0] === 'security') return securityVerdict(change);
  // Tags group operations in the docs; they change no request or answer.
  if (path[0] === 'tags') return { rule: 'tags-changed', class: 'docs' };
  if (path[0] === 'webhooks') return webhookVerdict(change);
  if (path[0] !== 'paths') return library(change);
  if (path.length === 2)
    return change.action === 'add' ? { rule: 'path-added', class: 'additive' } : { rule: 'path-removed', class: 'breaking' };
  if (path.length === 3) {
    return change.action === 'add' ? { rule: 'operation-added', class: 'additive' } : { rule: 'operation-removed', class: 'breaking' };
  }
  const part = path[3];
  const last = path[path.length - 1];
  if (part === 'security') return securityVerdict(change);
  if (part === SCOPES_EXTENSION) return scopesVerdict(change);
  if (part === 'deprecated') return { rule: 'operation-deprecated', class: 'additive' };
  if (typeof last === 'string' && (DOCS_KEYWORDS.has(last) || last.startsWith('x-'))) return { rule: 'docs-changed', class: 'docs' };
  if (path.includes('examples') || path.includes('example')) return { rule: 'docs-changed', class: 'docs' };
  if (part === 'responses') return responseVerdict(change);
  if (part === 'parameters') return parameterVerdict(change);
  if (part === 'requestBody') return requestBodyVerdict(change);
  return library(change);
}

/**
 * A change to the webhooks (OpenAPI 3.1): requests the service sends to its consumers' endpoints.
 * A new webhook is additive: an endpoint gets only the event types it asked for, or every type,
 * and a receiver drops a type it does not know (the document says so). Removing one is breaking.
 * A change inside one is judged by the diff library: its direction is the reverse of a request's,
 * and no rule of ours reads it yet.
 */
function webhookVerdict(change: RawChange): Verdict {
  if (change.path.length <= 2) {
    return change.action === 'add' ? { rule: 'webhook-added', class: 'additive' } : { rule: 'webhook-removed', class: 'breaking' };
  }
  return library(change);
}

/**
 * A change to the scopes an operation declares. Declaring them where there were none documents
 * what the server did already: every key made before scopes holds the scopes the documents declare
 * for what keys could do then. Any other change refuses keys that were allowed, or allows keys that
 * were refused: breaking.
 */
function scopesVerdict(change: RawChange): Verdict {
  if (change.path.length === 4 && change.action === 'add') return { rule: 'operation-scopes-declared', class: 'docs' };
  return { rule: 'operation-scopes-changed', class: 'breaking' };
}

function responseVerdict(change: RawChange): Verdict {
  const { path, action } = change;
  if (path.length === 5) {
    return action === 'add' ? { rule: 'response-status-added', class: 'additive' } : { rule: 'response-status-removed', class: 'breaking' };
  }
  if (path[5] === 'headers') {
    if (path.length <= 7) {
      if (action === 'add') return { rule: 'response-header-added', class: 'additive' };
      if (action === 'remove') return { rule: 'response-header-removed', class: 'breaking' };
    }
    if (path[7] === 'required') return { rule: 'response-header-made-optional', class: isTrue(change.after) ? 'additive' : 'breaking' };
    return schemaChange(change, 'response-header');
  }
  if (path[5] === 'content' && path.length === 7) {
    return action === 'add'
      ? { rule: 'response-media-type-added', class: 'additive' }
      : { rule: 'response-media-type-removed', class: 'breaking' };
  }
  return schemaChange(change, 'response');
}

function parameterVerdict(change: RawChange): Verdict {
  const { path, action } = change;
  if (path.length === 5) {
    const parameter = action === 'remove' ? change.before : change.after;
    if (action === 'add') {
      return isRecord(parameter) && isTrue(parameter.required)
        ? { rule: 'request-parameter-required-added', class: 'breaking' }
        : { rule: 'request-parameter-added', class: 'additive' };
    }
    if (action === 'remove') return { rule: 'request-parameter-removed', class: 'breaking' };
  }
  if (path[5] === 'required') {
    return isTrue(change.after)
      ? { rule: 'request-parameter-made-required', class: 'breaking' }
      : { rule: 'request-parameter-made-optional', class: 'additive' };
  }
  if (path[5] === 'in' || path[5] === 'name') return { rule: 'request-parameter-renamed', class: 'breaking' };
  return schemaChange(change, 'request-parameter');
}

function requestBodyVerdict(change: RawChange): Verdict {
  const { path, action } = change;
  if (path.length === 4) {
    const body = change.after;
    if (action === 'add')
      return isRecord(body) && isTrue(body.required)
        ? { rule: 'request-body-required-added', class: 'breaking' }
        : { rule: 'request-body-added', class: 'additive' };
    if (action === 'remove') return { rule: 'request-body-removed', class: 'breaking' };
  }
  if (path[4] === 'required' && path.length === 5) {
    return isTrue(change.after)
      ? { rule: 'request-body-made-required', class: 'breaking' }
      : { rule: 'request-body-made-optional', class: 'additive' };
  }
  if (path[4] === 'content' && path.length === 6) {
    return action === 'add'
      ? { rule: 'request-media-type-added', class: 'additive' }
      : { rule: 'request-media-type-removed', class: 'breaking' };
  }
  return schemaChange(change, 'request-field');
}

/**
 * A change inside a schema. In a response, consumers may rely on every promise: a field removed or
 * made optional, a changed type, format or bound, or a new enum value (the closed `Error.code`
 * set above all) breaks them. In a request, only what refuses a request that used to pass breaks:
 * a new required field, a narrower type, format, bound or enum.
 */
function schemaChange(change: RawChange, where: 'response' | 'response-header' | 'request-parameter' | 'request-field'): Verdict {
  const { path, action } = change;
  const response = where === 'response' || where === 'response-header';
  const keyword = lastKeyword(path);
  const parent = path[path.length - 2];
  if (parent === 'properties' && path.length >= 2) {
    if (response)
      return action === 'add' ? { rule: 'response-field-added', class: 'additive' } : { rule: 'response-field-removed', class: 'breaking' };
    return action === 'add' ? { rule: 'request-field-added', class: 'additive' } : { rule: 'request-field-removed', class: 'breaking' };
  }
  if (keyword === 'enum' || parent === 'enum') {
    if (response)
      return action === 'remove'
        ? { rule: `${where}-enum-value-removed`, class: 'additive' }
        : { rule: `${where}-enum-value-added`, class: 'breaking' };
    return action === 'add'
      ? { rule: `${where}-enum-value-added`, class: 'additive' }
      : { rule: `${where}-enum-narrowed`, class: 'breaking' };
  }
  if (keyword === 'required' || parent === 'required') {
    if (response)
      return action === 'add'
        ? { rule: 'response-field-made-required', class: 'additive' }
        : { rule: 'response-field-made-optional', class: 'breaking' };
    return action === 'remove'
      ? { rule: 'request-field-made-optional', class: 'additive' }
      : { rule: 'request-field-required-added', class: 'breaking' };
  }
  if (keyword === 'type' || keyword === 'format' || keyword === 'nullable' || keyword === 'items' || keyword === 'additionalProperties') {
    return {
      rule: `${where}-${keyword === 'format' ? 'format' : 'type'}-changed`,
      class: response ? 'breaking' : narrowsRequest(change, keyword),
    };
  }
  if (keyword !== undefined && BOUNDS.has(keyword)) {
    if (response) return { rule: `${where}-bounds-changed`, class: 'breaking' };
    return tightens(change, keyword)
      ? { rule: `${where}-bounds-narrowed`, class: 'breaking' }
      : { rule: `${where}-bounds-widened`, class: 'additive' };
  }
  return library(change);
}

/** Whether a change of a request schema's type keyword refuses requests that passed: everything but dropping a restriction. */
function narrowsRequest(change: RawChange, keyword: string): ChangeClass {
  if (keyword === 'nullable') return isTrue(change.after) ? 'additive' : 'breaking';
  if (keyword === 'format' && change.action === 'remove') return 'additive';
  if (keyword === 'additionalProperties' && change.action === 'replace' && change.after === true) return 'additive';
  return 'breaking';
}

/** Whether a changed bound in a request refuses values it accepted. */
function tightens(change: RawChange, keyword: string): boolean {
  if (change.action === 'add') return true;
  if (change.action === 'remove') return false;
  const before = Number(change.before);
  const after = Number(change.after);
  if (LOWER_BOUNDS.has(keyword)) return after > before;
  if (UPPER_BOUNDS.has(keyword)) return after < before;
  return true;
}

/** A security requirement added where there was none, or a requirement that asks for more, breaks every caller without it. */
function securityVerdict(change: RawChange): Verdict {
  if (change.action === 'remove') return { rule: 'security-requirement-removed', class: 'additive' };
  return { rule: 'security-requirement-added', class: 'breaking' };
}

function library(change: RawChange): Verdict {
  switch (change.libraryType) {
    case 'breaking':
    case 'unclassified':
      // A change nobody classified must be looked at by a person: it fails until a rule covers it.
      return { rule: `library-${change.libraryType}`, class: 'breaking' };
    case 'annotation':
      return { rule: 'library-annotation', class: 'docs' };
    default:
      return { rule: `library-${change.libraryType}`, class: 'additive' };
  }
}

/** The last schema keyword on the path, skipping array indexes. */
function lastKeyword(path: ReadonlyArray<string | number>): string | undefined {
  for (let i = path.length - 1; i >= 0; i -= 1) {
    const keyword = path[i];
    if (typeof keyword === 'string') return keyword;
  }
  return undefined;
}

function isTrue(value: unknown): boolean {
  return value === true;
}
