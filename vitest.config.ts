import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const src = (p: string): string => fileURLToPath(new URL(`./src/${p}`, import.meta.url))

export default defineConfig({
  resolve: {
    alias: [
      { find: /^ptykit$/, replacement: src('index.ts') },
      { find: /^ptykit\/(.*)$/, replacement: src('$1/index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    typecheck: {
      enabled: true,
      include: ['test/**/*.test-d.ts'],
      tsconfig: './tsconfig.json',
    },
    testTimeout: 20_000,
    hookTimeout: 20_000,
    allowOnly: false,
    passWithNoTests: false,
  },
})
