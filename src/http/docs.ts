import path from 'node:path';
import express, { type Router } from 'express';
import type { OpenAPIV3 } from 'openapi-types';
import { answeredBy } from './request-context';

/** Swagger UI's files, from its npm package: the page needs no CDN and works offline. */
const SWAGGER_UI = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS = new Set([
  'swagger-ui.css',
  'swagger-ui-bundle.js',
  'swagger-ui-standalone-preset.js',
  'favicon-32x32.png',
  'favicon-16x16.png',
]);

// Relative URLs throughout, so the page also works behind a proxy that mounts the service under a prefix.
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Petstore Store Orders API</title>
  <link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="docs/assets/swagger-ui.css">
</head>
<body>
  <div id="docs"></div>
  <script src="docs/assets/swagger-ui-bundle.js"></script>
  <script src="docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="docs/init.js"></script>
</body>
</html>
`;

/** Swagger UI's set-up: every version's document, the first one shown, each chosen in the top bar. */
const initScript = (urls: ReadonlyArray<{ url: string; name: string }>): string => `window.ui = SwaggerUIBundle({
  urls: ${JSON.stringify(urls)},
  'urls.primaryName': ${JSON.stringify(urls[0]?.name)},
  dom_id: '#docs',
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
  docExpansion: 'full',
  defaultModelsExpandDepth: 1,
  deepLinking: true,
  displayOperationId: true,
  tryItOutEnabled: false,
});
`;

/**
 * A version's document as the page shows it: the document the server runs on, with this
 * deployment first in its servers, so that "Try it out" calls the deployment that serves the page
 * wherever it is (behind a proxy's prefix too: the URL is relative to the copy, served at
 * `docs/openapi/<version>.json`), not an example server; the absolute servers it names follow.
 */
function pageCopy(version: string, document: OpenAPIV3.Document): Buffer {
  const elsewhere = (document.servers ?? []).filter((server) => /^https?:/.test(server.url));
  const servers = [{ url: `../../${version}`, description: 'This deployment' }, ...elsewhere];
  return Buffer.from(JSON.stringify({ ...document, servers }), 'utf8');
}

/** GET /docs: the API reference page, rendered by Swagger UI from each version's document, in the order given. */
export function docsRouter(documents: ReadonlyArray<[version: string, document: OpenAPIV3.Document]>): Router {
  const router = express.Router();
  const copies = new Map(documents.map(([version, document]) => [version, pageCopy(version, document)]));
  const init = initScript(
    documents.map(([version, document]) => ({ url: `docs/openapi/${version}.json`, name: `${version} (${document.info.version})` })),
  );
  router.get('/docs', (req, res) => {
    answeredBy(req, 'docs');
    // The page's URLs are relative to /docs: from /docs/ they would miss, so the page moves there
    // (relatively, so that a proxy's path prefix is kept).
    if (req.path.endsWith('/')) return res.redirect(301, `../docs${req.url.slice(req.path.length)}`);
    res.type('html').setHeader('Cache-Control', 'no-cache').send(PAGE);
  });
  router.get('/docs/init.js', (req, res) => {
    answeredBy(req, 'docs');
    res.type('js').setHeader('Cache-Control', 'no-cache').send(init);
  });
  router.get('/docs/openapi/:file', (req, res, next) => {
    answeredBy(req, 'docs');
    const copy = copies.get(req.params.file.replace(/\.json$/, ''));
    if (copy === undefined || !req.params.file.endsWith('.json')) return next();
    res.type('json').setHeader('Cache-Control', 'no-cache').send(copy);
  });
  router.get('/docs/assets/:file', (req, res, next) => {
    answeredBy(req, 'docs');
    if (!ASSETS.has(req.params.file)) return next();
    // The assets change only with the package version; a day of caching spares the 1.5 MB bundle.
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.sendFile(req.params.file, { root: SWAGGER_UI, dotfiles: 'deny' });
  });
  return router;
}
