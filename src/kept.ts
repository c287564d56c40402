/**
 * Values made once for each text and kept for the `most` texts made last: a parse of a stored
 * text, a key object for a secret, a body many workers send. Past `most`, the one made first is
 * let go, so a stream of new texts keeps the newest.
 */
export function keptByText<T>(most: number): (text: string, make: (text: string) => T) => T {
  const kept = new Map<string, T>();
  return (text, make) => {
    let value = kept.get(text);
    if (value === undefined) {
      value = make(text);
      if (kept.size >= most) {
        for (const first of kept.keys()) {
          kept.delete(first);
          break;
        }
      }
      kept.set(text, value);
    }
    return value;
  };
}
