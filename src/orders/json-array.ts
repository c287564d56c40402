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
 * The elements of a top-level JSON array read from a stream, each parsed on its own with
 * JSON.parse, one batch per chunk read: a file of any size is read holding one chunk and the
 * elements it completes at a time.
 *
 * The scan only finds where each element ends (outside strings, at depth 0, the next `,` or `]`);
 * JSON.parse checks each element's text in full, and the scan checks what lies between them (the
 * opening `[`, the commas, the closing `]`, nothing after it). A tokenizer that builds every value
 * from events (stream-json) did the same work several times over: this is the floor of one
 * JSON.parse pass. Errors name the element and what was wrong.
 */
export async function* jsonArrayBatches(input: AsyncIterable<Buffer | string> | Iterable<Buffer | string>): AsyncGenerator<unknown[]> {
  const decoder = new StringDecoder('utf8');
  /** Text of the element under way that an earlier chunk began. */
  let carried = '';
  let state = 'before-array' as 'before-array' | 'after-open' | 'before-element' | 'element' | 'after-array';
  let depth = 0;
  let inString = false;
  let escaped = false;
  let index = 0;
  let batch: unknown[] = [];

  const parse = (text: string): void => {
    try {
      batch.push(JSON.parse(text));
    } catch (err) {
      throw new JsonArrayError(`record ${index}: ${err instanceof Error ? err.message : String(err)}`);
    }
    index += 1;
  };

  for await (const chunk of input) {
    const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    let start = state === 'element' ? 0 : -1;
    for (let i = 0; i < text.length; i += 1) {
      const code = text.charCodeAt(i);
      if (state === 'element') {
        if (inString) {
          if (escaped) escaped = false;
          else if (code === BACKSLASH) escaped = true;
          else if (code === QUOTE) inString = false;
          continue;
        }
        if (code === QUOTE) inString = true;
        else if (code === OPEN_OBJECT || code === OPEN_ARRAY) depth += 1;
        else if ((code === CLOSE_OBJECT || code === CLOSE_ARRAY) && depth > 0) depth -= 1;
        else if (depth === 0 && (code === COMMA || code === CLOSE_ARRAY)) {
          parse(carried + text.slice(start, i));
          carried = '';
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
        throw new JsonArrayError(`record ${index}: a value is missing before "${text[i]}"`);
      } else {
        // The first character of an element: scanned again in the element state.
        state = 'element';
        start = i;
        i -= 1;
      }
    }
    if (state === 'element') carried += text.slice(start);
    if (batch.length > 0) {
      yield batch;
      batch = [];
    }
  }
  if (state === 'before-array') throw new JsonArrayError('the file is empty: it must hold a JSON array of orders', 'shape');
  if (state !== 'after-array') throw new JsonArrayError(`the file ends inside the array, at record ${index}`);
}
