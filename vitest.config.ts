import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import { SlowFilesFirstSequencer } from './test/support/slow-files-first-sequencer.js'

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
    // The type tests (`*.test-d.ts`). `npm test` turns them off here (`--typecheck.enabled=false`):
    // its typecheck step has just compiled the same files with the same tsconfig, and a second tsc
    // beside the test workers costs tens of seconds of CPU on 2 cores. `npx vitest run` keeps them.
    typecheck: {
      enabled: true,
      include: ['test/**/*.test-d.ts'],
      tsconfig: './tsconfig.json',
    },
    // Two test files at a time even on a 2-core machine (vitest's default there is one): most of
    // the slow files wait on real processes, sshd or Chromium rather than on the CPU. The real-process
    // tests assert counts and causes, never times. (The SSH test that once failed with two workers
    // lost its connection to a 1 s × 2 keepalive under load; the SSH tests now use the defaults.)
    maxWorkers: 2,
    // A clean clone has no durations cached: start the known slow files first (see the sequencer).
    sequence: { sequencer: SlowFilesFirstSequencer },
    testTimeout: 20_000,
    hookTimeout: 20_000,
    allowOnly: false,
    passWithNoTests: false,
  },
})
