// ESLint flat config: typescript-eslint's recommended type-checked rules for src/ and test/.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['out/**', 'out-test/**', 'out-tsc/**', 'node_modules/**', 'bundled/**', 'e2e/**', '*.mjs'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
      curly: 'error',
      'no-console': 'error',
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': 'off',
    },
  },
);
