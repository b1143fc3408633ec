import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/**', 'packages/cli/dist/**', 'node_modules/**', 'coverage/**', '.tmp/**', '**/node_modules/**', 'collector-config/_build/**', 'dashboards/*.json', '**/.run/**', 'src/formats/protobuf/gen/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        URL: 'readonly',
        TextDecoder: 'readonly',
        TextEncoder: 'readonly',
        performance: 'readonly',
        queueMicrotask: 'readonly',
        structuredClone: 'readonly',
        globalThis: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // OpenTelemetry must never be imported by the engine or the fingerprints: they are read and tested alone.
    files: ['src/detector/**/*.ts', 'src/fingerprint/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['@opentelemetry/*'], message: 'The engine is pure TypeScript: no OpenTelemetry imports.' }] }],
    },
  },
);
