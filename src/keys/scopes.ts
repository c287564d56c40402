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

/**
 * What a key may do when it is made without scopes: all that any key could do before keys had
 * scopes. A scope added later is granted only when named.
 */
export const DEFAULT_SCOPES: readonly string[] = ['orders:read', 'orders:cancel'];

/** The scopes of `required` that `held` lacks, in `required`'s order. */
export function missingScopes(required: readonly string[], held: ReadonlySet<string>): string[] {
  return required.filter((scope) => !held.has(scope));
}
