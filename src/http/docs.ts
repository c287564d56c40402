import path from 'node:path';
import express, { type Router } from 'express';
import { answeredBy } from './request-state';

/** Swagger UI's files, from its npm package: the page needs no CDN and works offline. */
const SWAGGER_UI = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png']);

// Relative URLs throughout, so the page also works behind a proxy that mounts the service under a prefix.
const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Petstore Store Orders API v1</title>
  <link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="docs/assets/swagger-ui.css">
</head>
<body>
  <div id="docs"></div>
  <script src="docs/assets/swagger-ui-bundle.js"></script>
  <script src="docs/init.js"></script>
</body>
</html>
`;

// Rendered from the document the server runs on; every operation open, so the page reads whole.
const INIT = `window.ui = SwaggerUIBundle({
  url: 'v1/openapi.json',
  dom_id: '#docs',
  docExpansion: 'full',
  defaultModelsExpandDepth: 1,
  deepLinking: true,
  displayOperationId: true,
  tryItOutEnabled: false,
});
`;

/** GET /docs: the API reference page, rendered by Swagger UI from /v1/openapi.json. */
export function docsRouter(): Router {
  const router = express.Router();
  router.get('/docs', (req, res) => {
    answeredBy(req, 'docs');
    res.type('html').setHeader('Cache-Control', 'no-cache').send(PAGE);
  });
  router.get('/docs/init.js', (req, res) => {
    answeredBy(req, 'docs');
    res.type('js').setHeader('Cache-Control', 'no-cache').send(INIT);
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
