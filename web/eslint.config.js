// ESLint (flat config): the recommended JavaScript and TypeScript rules, plus the rules of
// hooks for the Preact components. Formatting is Prettier's (.prettierrc.json), not ESLint's.
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'test-results/', 'playwright-report/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { languageOptions: { globals: { ...globals.browser } } },
  {
    files: ['**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      // The wire shapes are JSON the daemon defines (docs/protocol.md); `any` marks them.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Node scripts and the browser code they pass to page.evaluate.
    files: ['bench/**/*.mjs', 'e2e/**/*.ts', 'tests/**/*.ts', '*.config.*'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
);
