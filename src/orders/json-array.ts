import { StringDecoder } from 'node:string_decoder';

/**
 * A file that is not one JSON array; the message says where it went wrong. `shape` is set when the
 * file is not an array of values at all (empty, or some other JSON value), `syntax` when it is an
 * array whose text breaks off or does not parse.
 */
export class JsonArrayError extends Error {
  override name = 'JsonArrayError';
  constructor(
    message: string,
    readonly kind: 'shape' | 'syntax' = 'syntax',
  ) {
    super(message);
  }
}

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

/**
 * The elements of a top-level JSON array read from a stream, one batch per chunk read: a file of
 * any size is read holding one chunk and the elements it completes at a time.
 *
 * The scan only finds where each element ends (outside strings, at depth 0, the next `,` or `]`)
 * and checks what lies between them (the opening `[`, the commas, the closing `]`, nothing after
 * it). JSON.parse checks the elements' text in full: the elements a chunk completes in one call,
 * as the array they are, or, when that fails, each on its own, so that the error names the
 * element and what was wrong with it. A tokenizer that builds every value from events
 * (stream-json) did the same work several times over: this is the floor of one JSON.parse pass.
 */
export async function* jsonArrayBatches(input: AsyncIterable<Buffer | string> | Iterable<Buffer | string>): AsyncGenerator<unknown[]> {
  const decoder = new StringDecoder('utf8');
  /** Text of the element under way that an earlier chunk began. */
  let carried = '';
  let state = 'before-array' as 'before-array' | 'after-open' | 'before-element' | 'element' | 'after-array';
  let depth = 0;
  let inString = false;
  let escaped = false;
  /** The number of the first element the chunk completes. */
  let index = 0;

  for await (const chunk of input) {
    const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let start = state === 'element' ? 0 : -1;
    /** The text an earlier chunk gave the first element this one completes. */
    const head = carried;
    carried = '';
    /** Where each element this chunk completes begins and ends in it (the first may begin in `head`). */
    const starts: number[] = [];
    const ends: number[] = [];
    for (let i = 0; i < text.length; i += 1) {
      const code = text.charCodeAt(i);
      if (state === 'element') {
        if (inString) {
          if (escaped) {
            // The character after a backslash that ended the last chunk.
            escaped = false;
            continue;
          }
          // To the string's closing quote at once.
          const close = closingQuote(text, i);
          if (close === -1) {
            escaped = escapes(text, i, text.length);
            i = text.length;
          } else {
            i = close;
            inString = false;
          }
          continue;
        }
        if (code === QUOTE) inString = true;
        else if (code === OPEN_OBJECT || code === OPEN_ARRAY) depth += 1;
        else if ((code === CLOSE_OBJECT || code === CLOSE_ARRAY) && depth > 0) depth -= 1;
        else if (depth === 0 && (code === COMMA || code === CLOSE_ARRAY)) {
          starts.push(start);
          ends.push(i);
          state = code === COMMA ? 'before-element' : 'after-array';
        }
        continue;
      }
      if (SPACE.has(code)) continue;
      if (state === 'before-array') {
        if (code !== OPEN_ARRAY) throw new JsonArrayError('the file must hold a JSON array of orders', 'shape');
        state = 'after-open';
      } else if (state === 'after-array') {
        throw new JsonArrayError('the file holds more than one JSON array: there is text after its closing "]"');
      } else if (state === 'after-open' && code === CLOSE_ARRAY) {
        // An empty array.
        state = 'after-array';
      } else if (code === CLOSE_ARRAY || code === COMMA) {
        throw new JsonArrayError(`record ${index + starts.length}: a value is missing before "${text[i]}"`);
      } else {
        // The first character of an element: scanned again in the element state.
        state = 'element';
        start = i;
        i -= 1;
      }
    }
    if (state === 'element') carried = (starts.length === 0 ? head : '') + text.slice(start);
    if (starts.length > 0) {
      yield parseElements(head, text, starts, ends, index);
      index += starts.length;
    }
  }
  if (state === 'before-array') throw new JsonArrayError('the file is empty: it must hold a JSON array of orders', 'shape');
  if (state !== 'after-array') throw new JsonArrayError(`the file ends inside the array, at record ${index}`);
}

/** The first quote in `text` from `from` on that no backslash escapes (an even number of them before it), or -1. */
function closingQuote(text: string, from: number): number {
  for (let at = from; ;) {
    const quote = text.indexOf('"', at);
    if (quote === -1 || !escapes(text, from, quote)) return quote;
    at = quote + 1;
  }
}

/** Whether the text from `from` up to `end` ends in an odd number of backslashes: then they escape the character at `end`. */
function escapes(text: string, from: number, end: number): boolean {
  let backslashes = 0;
  for (let at = end - 1; at >= from && text.charCodeAt(at) === BACKSLASH; at -= 1) backslashes += 1;
  return backslashes % 2 === 1;
}

/**
 * The elements a chunk completes: those between `starts[k]` and `ends[k]` of `text`, the first
 * preceded by `head`, numbered from `first`. They are parsed in one call, as the array they are
 * in the file (only commas and spaces lie between them, the scan made sure); when that fails,
 * each on its own, to name the one that does not parse.
 */
function parseElements(head: string, text: string, starts: number[], ends: number[], first: number): unknown[] {
  const count = starts.length;
  try {
    const values: unknown = JSON.parse(`[${head}${text.slice(starts[0], ends[count - 1])}]`);
    if (Array.isArray(values) && values.length === count) return values;
  } catch {
    // One of them does not parse: found below.
  }
  const values: unknown[] = [];
  for (let k = 0; k < count; k += 1) {
    try {
      values.push(JSON.parse((k === 0 ? head : '') + text.slice(starts[k], ends[k])));
    } catch (err) {
      throw new JsonArrayError(`record ${first + k}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return values;
}
