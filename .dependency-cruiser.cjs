/**
 * The import rules of src/, checked by `npm run check:imports` (dependency-cruiser). Type-only
 * imports count: a cycle closed by `import type` today is a half-initialised module tomorrow.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A module must not import, directly or through others, a module that imports it.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'ground-floor-stays-down',
      comment: 'config, logger and metrics are read by every layer, so they import none of the layers above them.',
      severity: 'error',
      from: { path: '^src/(config|logger|metrics|log-output|records|ids|date-time|maybe-promise|thrown|rate-policy|retention|kept)[.]ts$' },
      to: { path: '^src/(store|http|handlers|feed|orders|keys|contract|openapi|cli|client|app|server|demo)([/.])' },
    },
    {
      name: 'openapi-below-contract',
      comment: 'src/openapi/ is the one door to openapi-backend, below the contract rules that walk through it.',
      severity: 'error',
      from: { path: '^src/openapi/' },
      to: { path: '^src/(contract|errors|http|handlers|feed|orders|store|keys|cli|app|server)([/.])' },
    },
    {
      name: 'store-below-contract-and-http',
      comment: 'The store owns the SQL and knows no HTTP, no operation, no API error and no version of the contract.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/(contract|errors|openapi|http|handlers|feed|orders|keys|cli|app|server)([/.])' },
    },
    {
      name: 'contract-below-http',
      comment: 'The contract rules read documents; they serve the request path and the CLI, never the reverse.',
      severity: 'error',
      from: { path: '^src/contract/' },
      to: { path: '^src/(http|handlers|feed|store|cli|app|server)([/.])' },
    },
    {
      name: 'http-below-handlers',
      comment: 'The request path runs handlers it is given (app.ts wires them); it never imports an operation module.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(handlers|cli|app|server)([/.])' },
    },
    {
      name: 'domain-knows-no-http',
      comment:
        'src/orders, src/keys and src/webhooks are the domain: they answer with outcomes and know neither the request path nor what is counted of it; handlers turn outcomes into replies.',
      severity: 'error',
      from: { path: '^src/(orders|keys|webhooks)/' },
      to: { path: '^src/(http|handlers|app|server|cli)/|^src/(metrics|app|server)[.]ts$' },
    },
    {
      name: 'only-the-cli-imports-the-cli',
      severity: 'error',
      from: { pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(generated|node_modules|dist)/' },
  },
};
