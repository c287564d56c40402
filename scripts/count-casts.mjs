// `npm run check:casts`: counts the type assertions in src/ (`x as T`, not `as const`) and the
// non-null assertions (`x!`), prints both, and fails when either passes its ceiling or when an
// `as unknown as` stands outside src/openapi/, the one door to the library whose loose types need it.
// A cast is a type the code lost: keep the count where it is, or lower it.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const CEILING = { casts: 40, nonNull: 10 };
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const verbose = process.argv.includes('--list');

const files = [];
const walk = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full);
    else if (entry.name.endsWith('.ts')) files.push(full);
  }
};
walk(path.join(root, 'src'));

const casts = [];
const nonNull = [];
const doubles = [];
for (const file of files.sort()) {
  const relative = path.relative(root, file);
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const where = (node) => `${relative}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
  const visit = (node) => {
    if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
      const constant = ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(source) === 'const';
      if (!constant) {
        casts.push(where(node));
        const inner = ts.isParenthesizedExpression(node.expression) ? node.expression.expression : node.expression;
        const unknownFirst = ts.isAsExpression(inner) && inner.type.kind === ts.SyntaxKind.UnknownKeyword;
        if (unknownFirst && !relative.startsWith(`src${path.sep}openapi${path.sep}`)) doubles.push(where(node));
      }
    }
    if (ts.isNonNullExpression(node)) nonNull.push(where(node));
    ts.forEachChild(node, visit);
  };
  visit(source);
}

process.stdout.write(
  `type assertions in src/: ${casts.length} \`as\` (at most ${CEILING.casts}), ${nonNull.length} \`!\` (at most ${CEILING.nonNull})\n`,
);
if (verbose) for (const at of [...casts.map((c) => `as ${c}`), ...nonNull.map((n) => `!  ${n}`)]) process.stdout.write(`  ${at}\n`);
const problems = [];
if (casts.length > CEILING.casts) problems.push(`${casts.length} \`as\` casts is more than ${CEILING.casts}`);
if (nonNull.length > CEILING.nonNull) problems.push(`${nonNull.length} non-null assertions is more than ${CEILING.nonNull}`);
for (const at of doubles) problems.push(`${at}: \`as unknown as\` outside src/openapi/`);
if (problems.length > 0) {
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  process.stderr.write('run `node scripts/count-casts.mjs --list` to see each one\n');
  process.exit(1);
}
