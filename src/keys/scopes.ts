import { commaList } from '../comma-list';
/**
 * The scopes a comma-separated `--scopes` list names, each once, in its order. Throws an Error
 * naming the option and the value when the list is empty or names a scope no document declares
 * (`known`).
 */
export function parseScopes(option: string, value: string, known: readonly string[]): string[] {
  const scopes = [...new Set(commaList(option, value, `scope (${known.join(',')})`))];
  const unknown = scopes.filter((scope) => !known.includes(scope));
  if (unknown.length > 0) {
    throw new Error(
      `${option}: unknown scope${unknown.length > 1 ? 's' : ''} "${unknown.join('", "')}"; the scopes are ${known.join(', ')}`,
    );
  }
  return scopes;
}

const parsed = new Map<string, ReadonlySet<string>>();
/** Most distinct scope lists kept parsed; past it, lists are parsed again (a store has few distinct lists). */
const PARSED_MAX = 256;

/** A key's stored scope list (KeyMatch.scopes, separated by spaces) as a set: parsed once per distinct list, since every keyed request reads one. */
export function scopeSet(stored: string): ReadonlySet<string> {
  let set = parsed.get(stored);
  if (set === undefined) {
    set = new Set(stored.split(' ').filter((scope) => scope !== ''));
    if (parsed.size < PARSED_MAX) parsed.set(stored, set);
  }
  return set;
}

/** The scopes of `required` that `held` lacks, in `required`'s order. */
export function missingScopes(required: readonly string[], held: ReadonlySet<string>): string[] {
  return required.filter((scope) => !held.has(scope));
}
