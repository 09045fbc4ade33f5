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
    // Two test files at a time even on a 2-core machine (vitest's default there is one): most of
    // the slow files wait on real processes, sshd or Chromium rather than on the CPU, and the
    // whole suite takes ~37 s less. The real-process tests assert counts and causes, never times.
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 20_000,
    allowOnly: false,
    passWithNoTests: false,
  },
})
