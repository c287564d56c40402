import fs from 'node:fs';
import path from 'node:path';
import { errorCode, errorMessage } from '../thrown';

/**
 * What the build compiles ahead of time (scripts/precompile.mjs) is written into `generated/`
 * beside its compiled code; code run from source (ts-jest) finds the project's build of it in
 * `dist/generated/`. Each module that loads such a file says which it takes and checks that it is
 * what this code would compile (its fingerprint).
 */
export const BUILT_HERE = path.join(__dirname, '..', '..', 'generated');
export const PROJECT_BUILD = path.join(__dirname, '..', '..', 'dist', 'generated');

/** The module at `file`, or undefined where there is no such file; any other failure to load it is thrown. */
export function builtModule(file: string): unknown {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const found: unknown = require(file);
    return found;
  } catch (err) {
    if (errorCode(err) !== 'MODULE_NOT_FOUND' || !errorMessage(err).startsWith(`Cannot find module '${file}'`)) throw err;
    return undefined;
  }
}

/** The text of the file at `file`, or undefined where there is no such file; any other failure to read it is thrown. */
export function builtText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') throw err;
    return undefined;
  }
}

/** The package manifests, versions included, of what compiles every precompiled module: Ajv and ajv-formats. */
export function compilerManifests(): string[] {
  return packageManifests(['ajv', 'ajv-formats']);
}

/** The manifests (package.json), versions included, of `packages` as a module in `from` finds them (default: this project's). */
export function packageManifests(packages: readonly string[], from?: string): string[] {
  return packages.map((name) =>
    fs.readFileSync(require.resolve(`${name}/package.json`, from === undefined ? undefined : { paths: [from] }), 'utf8'),
  );
}
