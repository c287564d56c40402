import Ajv from 'ajv';
import type { Options } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import type { AnyValidateFunction } from 'ajv/dist/types';
import { OpenAPIValidator, OpenAPIRouter, SetMatchType, ValidationContext, type AjvCustomizer, type OpenAPIBackend } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { asValidatedDocument, asValidatedSchema, openApiLineOf, type OpenApiLine } from './dialect';
import { checkDocument } from './document-check';
import { VALIDATOR_FORMATS } from './formats';
import { precompiledOptions, precompiledValidator, recorded, validatorKey } from './precompiled';

/**
 * The Ajv set-up for a document of `line`: for 3.0, Ajv's draft-07 class, as openapi-backend makes
 * its own; for 3.1, its JSON Schema 2020-12 class; each with openapi-backend's options and formats.
 * Each schema it compiles is first said in that JSON Schema (./dialect.ts). Then, as for every line:
 *
 * Adds VALIDATOR_FORMATS (./formats.ts) over the OpenAPI formats openapi-backend adds: ajv-formats'
 * full set, so that `date-time` really is checked, time zone required; by isDateTime, since every
 * order of a streamed list is checked.
 *
 * openapi-backend asks for a new Ajv for every operation and context; it gets the one Ajv of the
 * process set up the same way (the same line and options, whatever the context: the context
 * changes nothing an Ajv does), which compiles each schema once (see compilingOnce). A new Ajv
 * would compile the same schemas again, many times over.
 *
 * These Ajvs do not check each schema against the JSON Schema meta-schema before compiling it
 * (`validateSchema: false`), which would compile that meta-schema first, in every Ajv: most of a
 * start's time. Every schema they compile is from a document that its line's whole schema has
 * checked already, every Schema Object in it included (./document-check.ts): the server's start
 * checks its document before it compiles a validator, and so does createContractAjv.
 */
export function ajvCustomizerFor(line: OpenApiLine): AjvCustomizer {
  return (given, options) => {
    const setup = `${line} ${JSON.stringify(options)}`;
    let shared = ajvs.get(setup);
    if (shared === undefined) {
      const ajv = ajvOf(line, given, options);
      for (const [name, format] of Object.entries(VALIDATOR_FORMATS)) ajv.addFormat(name, format);
      shared = compilingOnce(ajv, line, setup);
      ajvs.set(setup, shared);
    }
    return shared;
  };
}

/** customizeAjv for a 3.0 document (Ajv's default draft-07 class, as openapi-backend makes it). */
export const customizeAjv: AjvCustomizer = ajvCustomizerFor('3.0');

/**
 * An Ajv of `line`'s JSON Schema with the options and formats openapi-backend gave its own Ajv
 * (the OpenAPI formats, int32, int64, …, which it adds before customizing), that compiles a schema
 * without checking it against the meta-schema first.
 */
function ajvOf(line: OpenApiLine, given: Ajv, options: Options): Ajv {
  const settings: Options = precompiledOptions({ ...options, validateSchema: false });
  const ajv = line === '3.0' ? new Ajv(settings) : new Ajv2020(settings);
  for (const [name, format] of Object.entries(given.formats)) if (format !== undefined) ajv.addFormat(name, format);
  return ajv;
}

/** The Ajv of each setup openapi-backend asks for, by its line and options. */
const ajvs = new Map<string, Ajv>();

/** A validator compiled on its first call, or when compileNow asks for it. */
type LazyValidator = AnyValidateFunction & { [COMPILE]: () => AnyValidateFunction };
const COMPILE = Symbol('compile');

/**
 * Makes `ajv.compile` answer a schema it has been given before, by the schema's text, with the
 * validator made then. The schemas openapi-backend compiles are dereferenced copies, a new object
 * each time, and self-contained (a cycle is a `$ref` into the schema itself): the same text is the
 * same validator.
 *
 * The validator is made when it is first called: openapi-backend also compiles validators this
 * server never calls (each operation's responses as one `oneOf`, and three of the four header
 * checks). The ones it does call are made before it serves (compileNow, from
 * compileUsedValidators), so that no request waits for one. A validator is taken from the build
 * where the build compiled the same schema on an Ajv set up the same way (./precompiled.ts), and
 * compiled otherwise.
 */
function compilingOnce(ajv: Ajv, line: OpenApiLine, setup: string): Ajv {
  const made = new Map<string, LazyValidator>();
  const compile = ajv.compile.bind(ajv) as (schema: unknown, meta?: boolean) => AnyValidateFunction;
  ajv.compile = ((schema: unknown, meta?: boolean) => {
    const key = `${meta === true} ${JSON.stringify(schema)}`;
    let validate = made.get(key);
    if (validate === undefined) {
      validate = lazily(() => {
        // Said in the JSON Schema this Ajv runs, meaning what the document's line means by it.
        const said = asValidatedSchema(schema, line);
        const builtKey = validatorKey(setup, meta === true, said);
        const built = precompiledValidator(builtKey);
        if (built !== undefined) return built;
        compilations += 1;
        return recorded(builtKey, ajv, compile(said, meta));
      });
      made.set(key, validate);
    }
    return validate;
  }) as Ajv['compile'];
  return ajv;
}

/** How many validators have been made in this process, and how many of them compiled (not taken from the build). */
let made = 0;
let compilations = 0;

/** How many validators customizeAjv's Ajvs have made so far in this process: compiled, or taken from the build. */
export function validatorsMade(): number {
  return made;
}

/** How many of those were compiled in this process, not taken from the build. */
export function validatorsCompiled(): number {
  return compilations;
}

function lazily(make: () => AnyValidateFunction): LazyValidator {
  let compiled: AnyValidateFunction | undefined;
  const compile = () => {
    made += 1;
    return make();
  };
  const validate = function (this: unknown, ...args: unknown[]) {
    compiled ??= compile();
    const valid = (compiled as (...a: unknown[]) => unknown).apply(this, args);
    validate.errors = compiled.errors;
    return valid;
  } as unknown as LazyValidator;
  validate[COMPILE] = () => (compiled ??= compile());
  return validate;
}

/** Compiles validators made by customizeAjv's Ajvs now, rather than on their first call. */
export function compileNow(...validators: unknown[]): void {
  for (const validate of validators) {
    if (typeof validate === 'function' && COMPILE in validate) (validate as LazyValidator)[COMPILE]();
  }
}

/**
 * Has openapi-backend's validator ask for each Ajv set-up once. Its getAjv makes a new Ajv, and
 * adds its formats to it, every time it is called (for every operation and context) before
 * customizeAjv hands back the one Ajv of that set-up (ajvCustomizerFor): about 40 ms of a start
 * went to making Ajvs to be dropped. The set-up is the options alone, as the customizer's is: the
 * context changes nothing an Ajv does.
 */
export function askingEachAjvOnce(validator: OpenAPIValidator): void {
  const ask = validator.getAjv.bind(validator);
  const given = new Map<string, Ajv>();
  validator.getAjv = (context, options = {}) => {
    const setup = JSON.stringify(options);
    let ajv = given.get(setup);
    if (ajv === undefined) given.set(setup, (ajv = ask(context, options)));
    return ajv;
  };
}

/**
 * Compiles every validator openapi-backend calls for the server (an operation's request
 * validators, its response validators by status, and its "any" header checks), so that they are
 * ready, and known to compile, before the first request.
 */
export function compileUsedValidators(api: OpenAPIBackend): void {
  for (const { operationId } of api.getOperations()) {
    if (operationId === undefined) continue;
    compileNow(...api.validator.getRequestValidatorsForOperation(operationId));
    compileNow(...Object.values(api.validator.getStatusBasedResponseValidatorForOperation(operationId) ?? {}));
    compileNow(
      ...Object.values(api.validator.getResponseHeadersValidatorForOperation(operationId) ?? {}).map((checks) => checks[SetMatchType.Any]),
    );
  }
}

/**
 * An Ajv set up exactly as the server's validator sets up its own, for schemas that are
 * checked outside a request (import records, the Error body of unrouted requests).
 */
export function createContractAjv(document: OpenAPIV3.Document): Ajv {
  // Its schemas are compiled unchecked (see ajvCustomizerFor): the document's own check comes first.
  checkDocument(document);
  const definition = asValidatedDocument(structuredClone(document));
  const validator = new OpenAPIValidator({
    definition,
    customizeAjv: ajvCustomizerFor(openApiLineOf(document)),
    router: new OpenAPIRouter({ definition }),
    lazyCompileValidators: true,
  });
  return validator.getAjv(ValidationContext.Response);
}
