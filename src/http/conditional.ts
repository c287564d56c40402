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

/**
 * A conditional GET's answer for a resource read with its entity tag: 304 with the tag while the
 * client's `If-None-Match` still matches it, else 200 with the body and the tag.
 */
export function conditionalReply<B>(
  read: { readonly etag: string },
  body: B,
  ifNoneMatch: string | string[] | undefined,
): { status: 200; body: B; headers: { ETag: string } } | { status: 304; headers: { ETag: string } } {
  if (ifNoneMatchMatches(ifNoneMatch, read.etag)) return { status: 304, headers: { ETag: read.etag } };
  return { status: 200, body, headers: { ETag: read.etag } };
}
