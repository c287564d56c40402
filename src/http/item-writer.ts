import type Ajv from 'ajv';
import fastJson from 'fast-json-stringify';
import type { OpenAPIV3 } from 'openapi-types';
import { isDateTime } from '../date-time';
import { describeAjvError } from '../contract/validation';

/** An item of a streamed array that the contract refuses: it is never written. */
export class ItemViolation extends Error {
  override name = 'ItemViolation';
  constructor(
    readonly item: unknown,
    readonly problem: string,
  ) {
    super(problem);
  }
}

/**
 * Checks a run of an array reply's items against their schema and returns them as JSON, joined by
 * commas, between `before` and `after`; throws an ItemViolation for the first item it refuses.
 */
export type ItemWriter = (items: readonly unknown[], before: string, after: string) => string;

/**
 * Compiles the writer of an array's items from the item schema. The items of a streamed list are
 * checked one by one, formats included, before they are written.
 *
 * For a flat object of scalar properties (what every list of this API holds), check and
 * serialization are one generated function: each value is tested against its schema once and
 * written as it is tested, so the check costs little more than the serialization alone. It writes
 * exactly the declared properties, so what is sent is what was checked. Any other schema is checked
 * by the contract's Ajv and written by fast-json-stringify. Both paths hold items to the same rules
 * (tests/http/item-writer.test.ts proves it on generated items).
 *
 * Both append each item to one string as they go, rather than joining a string per item: V8 then
 * copies the text once, when it is written, not once to join it and again to write it
 * (docs/performance-log.md).
 */
export function compileItemWriter(schema: OpenAPIV3.SchemaObject, ajv: Ajv): ItemWriter {
  return compileFlatWriter(schema) ?? compileGenericWriter(schema, ajv);
}

/** The general path: the contract's Ajv, then fast-json-stringify. */
function compileGenericWriter(schema: OpenAPIV3.SchemaObject, ajv: Ajv): ItemWriter {
  const validate = ajv.compile(schema);
  const serialize = fastJson(schema as Parameters<typeof fastJson>[0]);
  return (items, before, after) => {
    let text = before;
    for (const [index, item] of items.entries()) {
      if (!validate(item)) throw new ItemViolation(item, (validate.errors ?? []).map((error) => describeAjvError(error)).join('; '));
      text += (index === 0 ? '' : ',') + serialize(item);
    }
    return text + after;
  };
}

/** Keywords that only describe a property, and so need no check. */
const ANNOTATIONS = new Set(['description', 'example', 'examples', 'title', 'deprecated', 'readOnly', 'writeOnly', 'externalDocs', 'xml']);
const SAFE = Number.MAX_SAFE_INTEGER;
const INT_RANGE: Record<string, number> = { int32: 2 ** 31, int64: 2 ** 63 };

/**
 * One function that checks and writes an object whose properties are integers, booleans or
 * strings (with bounds, lengths, enums and the date-time, int32 and int64 formats); null for any
 * schema that uses something else, which then takes the general path.
 */
function compileFlatWriter(schema: OpenAPIV3.SchemaObject): ItemWriter | null {
  if (schema.type !== 'object' || schema.additionalProperties !== false || !schema.properties) return null;
  const allowed = new Set(['type', 'properties', 'required', 'additionalProperties', ...ANNOTATIONS]);
  if (Object.keys(schema).some((keyword) => !allowed.has(keyword))) return null;
  const required = new Set(schema.required ?? []);
  const names = Object.keys(schema.properties);
  if ([...required].some((name) => !names.includes(name))) return null;

  const lines: string[] = [];
  /** Each property's JSON, as pieces: its key and the constant parts of its value, and the expressions between them. */
  const pieces: Piece[][] = [];
  const optional: boolean[] = [];
  for (const [index, name] of names.entries()) {
    const property = schema.properties[name] as OpenAPIV3.SchemaObject;
    const check = propertyCheck(property, `v${index}`, name);
    if (check === null) return null;
    lines.push(`const v${index} = item[${JSON.stringify(name)}];`);
    if (required.has(name))
      lines.push(`if (v${index} === undefined) return fail(item, ${JSON.stringify(`${name} is required`)});`, check.test);
    else lines.push(`if (v${index} !== undefined) { ${check.test} }`);
    pieces.push([{ text: `${JSON.stringify(name)}:` }, ...check.write]);
    optional.push(!required.has(name));
  }
  let body: string;
  if (optional.includes(true)) {
    const parts = pieces.map((each, index) =>
      optional[index] ? `(v${index} === undefined ? '' : ${concatenation(each)})` : concatenation(each),
    );
    body = `'{' + [${parts.join(', ')}].filter((part) => part !== '').join(',') + '}'`;
  } else {
    // One concatenation for the whole object, its constant text merged: each + makes a string.
    body = concatenation([
      { text: '{' },
      ...pieces.flatMap((each, index) => (index === 0 ? each : [{ text: ',' }, ...each])),
      { text: '}' },
    ]);
  }
  const source = `
    return function writeItems(items, before, after) {
      let text = before;
      for (let i = 0; i < items.length; i += 1) {
        const item = items[i];
        if (typeof item !== 'object' || item === null || Array.isArray(item)) return fail(item, 'value must be object');
        ${lines.join('\n        ')}
        text += (i === 0 ? '' : ',') + ${body};
      }
      return text + after;
    };`;
  // The generated code only reads the item and builds a string; every name in it is a constant
  // of the spec, written with JSON.stringify. Generating it is the point: one function per schema,
  // straight-line for each item, as fast-json-stringify and Ajv do.
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  const build = new Function('fail', 'isDateTime', 'jsonString', source) as (...deps: unknown[]) => ItemWriter;
  // The generated code returns fail(item, problem) for the first item it refuses: it throws.
  const fail = (item: unknown, problem: string): never => {
    throw new ItemViolation(item, problem);
  };
  return build(fail, isDateTime, jsonString);
}

/** A piece of an item's JSON: constant text, or an expression whose value is text (or a number, written as it converts). */
type Piece = { readonly text: string } | { readonly expression: string };

/** The pieces as one JavaScript concatenation, adjacent constant text merged; it starts with text, so every + makes a string. */
function concatenation(pieces: readonly Piece[]): string {
  const merged: Piece[] = [];
  for (const piece of pieces) {
    const last = merged[merged.length - 1];
    if ('text' in piece && last !== undefined && 'text' in last) merged[merged.length - 1] = { text: last.text + piece.text };
    else merged.push(piece);
  }
  return merged.map((piece) => ('text' in piece ? JSON.stringify(piece.text) : `(${piece.expression})`)).join(' + ');
}

/** The test and the JSON pieces of one property's value `v`, or null when the schema needs Ajv. */
function propertyCheck(schema: OpenAPIV3.SchemaObject, v: string, name: string): { test: string; write: Piece[] } | null {
  const keywords = Object.keys(schema).filter((keyword) => !ANNOTATIONS.has(keyword));
  const fail = (message: string): string => `return fail(item, ${JSON.stringify(`${name} ${message}`)});`;
  const only = (...allowed: string[]): boolean => keywords.every((keyword) => allowed.includes(keyword));
  const tests: string[] = [];
  switch (schema.type) {
    case 'integer': {
      if (!only('type', 'minimum', 'maximum', 'format')) return null;
      if (schema.format !== undefined && !(schema.format in INT_RANGE)) return null;
      // Integers beyond the safe range cannot be written exactly: such a schema takes the general path.
      if (!(schema.minimum !== undefined && schema.maximum !== undefined && schema.minimum >= -SAFE && schema.maximum <= SAFE)) return null;
      tests.push(`if (!Number.isInteger(${v})) ${fail('must be integer')}`);
      if (schema.maximum !== undefined) tests.push(`if (${v} > ${schema.maximum}) ${fail(`must be <= ${schema.maximum}`)}`);
      if (schema.minimum !== undefined) tests.push(`if (${v} < ${schema.minimum}) ${fail(`must be >= ${schema.minimum}`)}`);
      const range = schema.format === undefined ? undefined : INT_RANGE[schema.format];
      if (range !== undefined) tests.push(`if (!(${v} >= ${-range} && ${v} < ${range})) ${fail(`must match format "${schema.format}"`)}`);
      // A safe integer converts to exactly its JSON.
      return { test: tests.join(' '), write: [{ expression: v }] };
    }
    case 'boolean':
      if (!only('type')) return null;
      return { test: `if (typeof ${v} !== 'boolean') ${fail('must be boolean')}`, write: [{ expression: `${v} ? 'true' : 'false'` }] };
    case 'string': {
      if (!only('type', 'format', 'maxLength', 'minLength', 'enum')) return null;
      if (schema.format !== undefined && schema.format !== 'date-time') return null;
      tests.push(`if (typeof ${v} !== 'string') ${fail('must be string')}`);
      if (schema.enum !== undefined) {
        const values = schema.enum as unknown[];
        if (!values.every((value) => typeof value === 'string')) return null;
        tests.push(
          `if (!${JSON.stringify(values)}.includes(${v})) ${fail(`must be one of ${values.map((value) => JSON.stringify(value)).join(', ')}`)}`,
        );
      }
      if (schema.format === 'date-time') tests.push(`if (!isDateTime(${v})) ${fail('must match format "date-time"')}`);
      // Lengths count code points, as Ajv does; a date-time is all ASCII, so its length is exact.
      const length = schema.format === 'date-time' ? `${v}.length` : `[...${v}].length`;
      if (schema.maxLength !== undefined)
        tests.push(`if (${length} > ${schema.maxLength}) ${fail(`must NOT have more than ${schema.maxLength} characters`)}`);
      if (schema.minLength !== undefined)
        tests.push(`if (${length} < ${schema.minLength}) ${fail(`must NOT have fewer than ${schema.minLength} characters`)}`);
      // A date-time is digits and punctuation but for its separator, which may be a control
      // character (a tab, say) that JSON must escape: its quotes are constant text either way.
      const write: Piece[] =
        schema.format === 'date-time'
          ? [{ text: '"' }, { expression: `${v}.charCodeAt(10) < 32 ? JSON.stringify(${v}).slice(1, -1) : ${v}` }, { text: '"' }]
          : [{ expression: `jsonString(${v})` }];
      return { test: tests.join(' '), write };
    }
    default:
      return null;
  }
}

/** A string as JSON: as it is, quoted, when nothing in it needs escaping (a date-time, say). */
function jsonString(value: string): string {
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return JSON.stringify(value);
  }
  return `"${value}"`;
}
