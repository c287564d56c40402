/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  transform: {
    // TypeScript, and the one ESM-only dependency (openapi-backend's ref parser), compiled to CommonJS
    // one file at a time, without type information: `npm run typecheck` checks the types of tests/.
    '^.+\\.[tj]s$': ['ts-jest', { tsconfig: { allowJs: true, isolatedModules: true } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!@apidevtools/json-schema-ref-parser/)'],
  testTimeout: 30000,
  // Most suites wait on servers, child processes and databases rather than on a core, so three
  // workers keep two cores busy; every test waits on events, never on the clock, so load does not
  // change what it proves.
  maxWorkers: 3,
  // On a fresh checkout, with no timings yet, the suites that start processes go first.
  testSequencer: '<rootDir>/tests/sequencer.cjs',
  // Checks once whether PostgreSQL is there, so the store-parameterised suites know what to run.
  globalSetup: '<rootDir>/tests/global-setup.ts',
};
