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
      // The Store interface is async so that its SQLite implementation, which is synchronous, can
      // turn every throw into a rejection by being an async function with nothing to await.
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
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
