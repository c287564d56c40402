import { createHash } from 'node:crypto';
import path from 'node:path';
import type Ajv from 'ajv';
import { _ } from 'ajv';
import type { Options } from 'ajv';
import standaloneCode from 'ajv/dist/standalone';
import type { AnyValidateFunction } from 'ajv/dist/types';
import { isRecord } from '../records';
import { BUILT_HERE, PROJECT_BUILD, builtModule, compilerManifests } from './built';
import { VALIDATOR_FORMATS } from './formats';

/**
 * The contract's validators, compiled by the build rather than at every start. Compiling them was
 * about a quarter of a start's time: Ajv writes each validator's code from its schema, and a
 * server serving three documents makes about fifty. The build (scripts/precompile.mjs) starts the
 * app as `serve` does, with recordValidators() on, and writes every validator it compiled as
 * Ajv's standalone code into one module; a start finds each there by its key, and compiles only
 * what it does not find (a document edited since the build, or one a test makes).
 *
 * A validator's key is what makes its code: the Ajv's setup (the document's line and its options)
 * and the schema exactly as compiled, said in the line's JSON Schema. The module also carries a
 * fingerprint of the compiler (Ajv's and ajv-formats' manifests, versions included, and the format
 * names); a module compiled by another is not used, so a validator is either the code this
 * process's Ajv would write, or compiled now.
 */

/** The module's file, in a build's generated/ (./built.ts). */
const MODULE_FILE = 'validators.js';

/** How the module's code reaches a format: by name, in VALIDATOR_FORMATS, from the build's own output. */
const FORMATS_CODE = _`require("../src/openapi/formats").VALIDATOR_FORMATS`;

interface PrecompiledModule {
  readonly fingerprint: string;
  /** Each validator by its key; a validator's code is run only when it is first asked for. */
  readonly validators: Readonly<Record<string, () => AnyValidateFunction>>;
}

/** The key of the validator `schema` compiles to on an Ajv of `setup`, `meta` as Ajv's compile takes it. */
export function validatorKey(setup: string, meta: boolean, schema: unknown): string {
  return createHash('sha256')
    .update(`${setup}\n${meta}\n${JSON.stringify(schema)}`)
    .digest('hex');
}

/** The build's validator for `key`, or undefined where the build made none (or none this compiler would). */
export function precompiledValidator(key: string): AnyValidateFunction | undefined {
  if (recording !== undefined) return undefined;
  loaded ??= { module: load() };
  const validators = loaded.module?.validators;
  const make = validators !== undefined && Object.hasOwn(validators, key) ? validators[key] : undefined;
  return make?.();
}

let loaded: { module: PrecompiledModule | undefined } | undefined;

function load(): PrecompiledModule | undefined {
  const found = builtModule(path.join(BUILT_HERE, MODULE_FILE)) ?? builtModule(path.join(PROJECT_BUILD, MODULE_FILE));
  return isPrecompiledModule(found) && found.fingerprint === fingerprint() ? found : undefined;
}

function isPrecompiledModule(value: unknown): value is PrecompiledModule {
  return isRecord(value) && typeof value.fingerprint === 'string' && isRecord(value.validators);
}

/** The compiler, as one hash: Ajv's and ajv-formats' package manifests and the formats' names. */
function fingerprint(): string {
  return createHash('sha256')
    .update(JSON.stringify({ manifests: compilerManifests(), formats: Object.keys(VALIDATOR_FORMATS).sort() }))
    .digest('hex');
}

/** The validators compiled while the build records, by key, each with the Ajv that compiled it. */
let recording: Map<string, { ajv: Ajv; validate: AnyValidateFunction }> | undefined;

/**
 * From now on, in this process, every validator is compiled (none is taken from a build) and kept
 * for precompiledModule, and every Ajv is made to write standalone code (precompiledOptions). For
 * the build, before any Ajv is made.
 */
export function recordValidators(): void {
  recording = new Map();
}

/** The options an Ajv is made with beside `options`: the code options standalone code needs, while recording. */
export function precompiledOptions(options: Options): Options {
  if (recording === undefined) return options;
  return { ...options, code: { ...options.code, source: true, formats: FORMATS_CODE } };
}

/** Keeps a validator compiled while recording. */
export function recorded(key: string, ajv: Ajv, validate: AnyValidateFunction): AnyValidateFunction {
  recording?.set(key, { ajv, validate });
  return validate;
}

/** The module of every validator recorded so far, as the build writes it. */
export function precompiledModule(): string {
  if (recording === undefined) throw new Error('recordValidators() was not called: no validator was recorded');
  const entries = [...recording].map(
    ([key, { ajv, validate }]) =>
      `${JSON.stringify(key)}: () => {\nconst module = { exports: {} };\n${standaloneCode(ajv, validate)}\nreturn module.exports;\n},`,
  );
  return [
    "// Generated by scripts/precompile.mjs: the contract's validators as Ajv compiled them (src/openapi/precompiled.ts). Do not edit.",
    '"use strict";',
    `exports.fingerprint = ${JSON.stringify(fingerprint())};`,
    'exports.validators = {',
    ...entries,
    '};',
    '',
  ].join('\n');
}
