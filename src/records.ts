/**
 * Whether a value read from outside (parsed JSON or YAML, a library's loosely typed answer) is an
 * object whose fields can be read, each as `unknown` until it is checked.
 */
export function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
