/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  transform: {
    // TypeScript, and the one ESM-only dependency (openapi-backend's ref parser), compiled to CommonJS.
    '^.+\\.[tj]s$': ['ts-jest', { tsconfig: { allowJs: true } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!@apidevtools/json-schema-ref-parser/)'],
  testTimeout: 30000,
  // Checks once whether PostgreSQL is there, so the store-parameterised suites know what to run.
  globalSetup: '<rootDir>/tests/global-setup.ts',
};
