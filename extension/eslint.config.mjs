// Lint for the extension's TypeScript: eslint's and typescript-eslint's recommended rules.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/lib/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx}'],
    languageOptions: { parserOptions: { ecmaFeatures: { jsx: true } } },
    rules: {
      // REST payloads are read leniently in a few places; everything else is typed.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-namespace': 'off',
      eqeqeq: ['error', 'smart'],
      curly: ['error', 'all'],
      // Functions that fit on a screen (scripts/check_sizes.py holds modules to 400 lines).
      'max-lines-per-function': ['error', { max: 50 }]
    }
  }
);
