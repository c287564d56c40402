/**
 * Whether an `If-None-Match` header matches an entity tag, by the weak comparison RFC 9110 §13.1.2
 * prescribes: `*` matches anything, and `W/"x"` matches `"x"`.
 */
export function ifNoneMatchMatches(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return true;
  const opaque = stripWeak(etag);
  for (const candidate of value.split(',')) {
    if (stripWeak(candidate.trim()) === opaque) return true;
  }
  return false;
}

function stripWeak(tag: string): string {
  return tag.startsWith('W/') ? tag.slice(2) : tag;
}
