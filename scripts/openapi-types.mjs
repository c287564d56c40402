// A document's TypeScript types, as openapi-typescript's CLI writes them (`openapi-typescript
// DOCUMENT -o TYPES`), made in this process: `npm run generate` and `npm run dev` make several
// documents' types at once, and a CLI run per document paid most of its time loading
// openapi-typescript and TypeScript again. tests/scripts/openapi-types.test.ts compares the two.
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

/**
 * The Redocly configuration the CLI lints and bundles with: the redocly.yaml of `root`, or the
 * "minimal" rules without one. Taken from the @redocly/openapi-core that openapi-typescript itself
 * depends on, as its CLI does.
 */
async function redoclyConfig(root) {
  const requireFromTypes = createRequire(import.meta.resolve('openapi-typescript'));
  const { createConfig, findConfig, loadConfig } = await import(pathToFileURL(requireFromTypes.resolve('@redocly/openapi-core')).href);
  const configPath = findConfig(root);
  return configPath ? loadConfig({ configPath }) : createConfig({}, { extends: ['minimal'] });
}

/**
 * A maker of types for the documents of the project at `root`: `types(document)` gives the text
 * the CLI would write for `document` (a path relative to `root`), and throws what it would print
 * for a document it refuses.
 */
export async function typesMaker(root) {
  const redocly = await redoclyConfig(root);
  return async (document) =>
    `${COMMENT_HEADER}${astToString(await openapiTS(pathToFileURL(path.join(root, document)), { redocly, silent: false }))}`;
}
