// Loads a module of src/ that imports nothing straight from its TypeScript source, for the scripts
// that run before anything is built (scaffold, the document checks): they then apply the very rule
// the server applies, not a copy of it. TypeScript itself strips the types.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The exports of `src/<relative>.ts`, which must import nothing. */
export async function loadSource(relative) {
  const file = path.join(root, 'src', `${relative}.ts`);
  const source = readFileSync(file, 'utf8');
  const { outputText } = ts.transpileModule(source, {
    fileName: file,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  if (/^\s*import\s/m.test(outputText))
    throw new Error(`src/${relative}.ts imports another module; scripts can only load one that imports nothing`);
  return import(`data:text/javascript;base64,${Buffer.from(outputText).toString('base64')}`);
}
