// The part of `npm run check:docs` that no library does (remark-validate-links, run first, checks
// every link and heading): in README.md, CHANGELOG.md, docs/ and src/store/README.md, a path in back-quotes under src/,
// spec/, scripts/ or tests/ must exist, and the Layout (docs/architecture.md) must name every file of
// src/http and src/store, so that neither can outlive a rename. Usage: check-docs.mjs [ROOT] (default: this project).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { remark } from 'remark';
import { visit } from 'unist-util-visit';

const root = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
const PATH = /^(?:src|spec|scripts|tests)\/[\w./-]*$/;
/** The files the spec authors' walkthrough (docs/spec-authors.md) has `npm run scaffold` write for its example operation: named before they exist. */
const EXAMPLE_FILES = new Set(['src/handlers/v2/add-order-note.ts', 'tests/handlers/v2/add-order-note.test.ts']);

const documents = [
  'README.md',
  'CHANGELOG.md',
  'src/store/README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const problems = [];

for (const document of documents) {
  const tree = remark().parse(readFileSync(path.join(root, document), 'utf8'));
  visit(tree, 'inlineCode', (node) => {
    const text = node.value.trim();
    if (PATH.test(text) && !EXAMPLE_FILES.has(text) && !existsSync(path.join(root, text))) {
      problems.push(`${document}:${node.position.start.line}: \`${text}\` does not exist`);
    }
  });
}

// The Layout: a fenced block under "## Layout" in docs/architecture.md, an entry per line (an indented
// line goes on with the entry above it); a file is named by its path or, in an entry of its folder, by its name.
const LAYOUT_PAGE = 'docs/architecture.md';
const page = remark().parse(readFileSync(path.join(root, LAYOUT_PAGE), 'utf8'));
const layoutAt = page.children.findIndex((node) => node.type === 'heading' && node.depth === 2 && node.children[0]?.value === 'Layout');
const layout = page.children.slice(layoutAt + 1).find((node) => node.type === 'code')?.value;
if (layoutAt === -1 || layout === undefined) problems.push(`${LAYOUT_PAGE}: no "## Layout" section with its block`);
else {
  const entries = layout
    .split('\n')
    .reduce(
      (all, line) => (/^\s/.test(line) && all.length > 0 ? [...all.slice(0, -1), `${all.at(-1)} ${line.trim()}`] : [...all, line]),
      [],
    );
  for (const folder of ['src/http', 'src/store', 'src/store/sqlite', 'src/store/postgres']) {
    for (const entry of readdirSync(path.join(root, folder), { withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const named = entries.some(
        (line) =>
          line.includes(`${folder}/${entry.name}`) || (line.startsWith(`${folder}/`) && line.split(/[\s,;()]+/).includes(entry.name)),
      );
      if (!named) problems.push(`${LAYOUT_PAGE}: the Layout does not name ${folder}/${entry.name}`);
    }
  }
}

if (problems.length > 0) {
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  process.exit(1);
}
process.stdout.write(
  `every back-quoted path in ${documents.length} documents exists, and the Layout names every file of src/http and src/store\n`,
);
