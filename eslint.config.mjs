import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['.dev/', 'dist/', 'generated/', 'node_modules/', 'coverage/', 'test-artifacts/'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      'no-console': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // A store method that answers with a promise but is synchronous inside (SQLite) is an async
      // function with nothing to await, so that whatever it throws reaches its caller as a rejection.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // supertest's response bodies and jest's asymmetric matchers are `any` by design.
    files: ['tests/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  // Plain JavaScript configuration and scripts are outside the TypeScript project.
  { files: ['**/*.js', '**/*.mjs', '**/*.cjs'], ...tseslint.configs.disableTypeChecked },
  // CommonJS files load their modules with require().
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
