/**
 * A value found once for each operation and status, then kept: looked up by the operation object
 * and the status number, so that a reply costs two map reads and makes no key.
 */
export function perOperationAndStatus<O extends object, T extends object | null>(
  find: (operation: O, status: number) => T,
): (operation: O, status: number) => T {
  const found = new WeakMap<O, Map<number, T>>();
  return (operation, status) => {
    let byStatus = found.get(operation);
    if (byStatus === undefined) {
      byStatus = new Map();
      found.set(operation, byStatus);
    }
    const known = byStatus.get(status);
    if (known !== undefined) return known;
    const value = find(operation, status);
    byStatus.set(status, value);
    return value;
  };
}

/**
 * What a map of responses by status holds for `status`, as openapi-backend's
 * `findStatusCodeMatch` finds it: the status itself, else its range (`2XX`), else `default`.
 */
export function statusMatch<T>(status: number, byStatus: Readonly<Record<string, T>>): T | undefined {
  return byStatus[status] ?? byStatus[`${Math.floor(status / 100)}XX`] ?? byStatus.default;
}
