import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { configDefaults, defineConfig } from 'vitest/config'
import { SlowFilesFirstSequencer } from './test/support/slow-files-first-sequencer.js'

// Paths from the config's own directory, not the working directory: vitest finds this config from
// a subdirectory too (`cd test/pty-host && npx vitest run x`), or with `--root`.
const repo = (p: string): string => fileURLToPath(new URL(`./${p}`, import.meta.url))
const src = (p: string): string => repo(`src/${p}`)

/**
 * The test files that replace a module (`vi.mock` / `vi.doMock`: a gated `node:net`, a counting
 * `node:fs`). Only these run isolated, each in a fresh module graph: a module replaced for one file
 * must not be what the next file in the same worker imports. Every other file shares its worker's
 * modules with the files before it, which spares the suite re-importing ptykit, fast-check and
 * their dependencies once per file (about 0.4 s of CPU a file, a third of the suite's time on two
 * cores). Found by reading the files, so a new file that mocks a module is isolated without a list
 * (read when vitest starts: restart a watching `npx vitest` after adding a `vi.mock` to a file).
 */
const filesThatMockModules = ['test', 'examples'].flatMap((dir) =>
  readdirSync(repo(dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => `${dir}/${name.split('\\').join('/')}`)
    .filter((file) => /\bvi\.(?:mock|doMock)\(/.test(readFileSync(repo(file), 'utf8'))),
)

/** The quick bench's smoke test: the one test file that runs the built package (dist/). */
const BENCH_SMOKE = 'test/bench/bench-smoke.test.ts'

export default defineConfig({
  resolve: {
    alias: [
      { find: /^ptykit$/, replacement: src('index.ts') },
      { find: /^ptykit\/(.*)$/, replacement: src('$1/index.ts') },
    ],
  },
  test: {
    // The repository, wherever vitest is started from (the projects' globs and the list of files
    // that mock a module are relative to it).
    root: repo('.'),
    // Two test files at a time even on a 2-core machine (vitest's default there is one): most of
    // the slow files wait on real processes, sshd or Chromium rather than on the CPU. The real-process
    // tests assert counts and causes, never times. (The SSH test that once failed with two workers
    // lost its connection to a 1 s × 2 keepalive under load; the SSH tests now use the defaults.)
    maxWorkers: 2,
    // A clean clone has no durations cached: start the known slow files first (see the sequencer).
    sequence: { sequencer: SlowFilesFirstSequencer },
    // One scratch TMPDIR for the run, removed at its end; a test's own scratch left in it fails the run.
    globalSetup: [repo('test/support/run-scratch-dir.ts')],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    allowOnly: false,
    passWithNoTests: false,
    // The files are named by the projects (vitest concatenates a project's `include` with the
    // root's, so the root names none).
    projects: [
      {
        extends: true,
        test: { name: 'shared-modules', isolate: false, include: ['test/**/*.test.ts', 'examples/**/*.test.ts'], exclude: [...configDefaults.exclude, ...filesThatMockModules, BENCH_SMOKE] },
      },
      // The quick bench (`npm run bench -- --quick`) runs the built package, building dist/ when it
      // is stale: a project of its own, so `npm test` can run it after the package checks, whose
      // `npm pack` rebuilds dist/ (tsup empties it first), while the other files run beside them.
      { extends: true, test: { name: 'bench-smoke', include: [BENCH_SMOKE] } },
      { extends: true, test: { name: 'isolated', isolate: true, include: filesThatMockModules } },
      // The type tests (`*.test-d.ts`), compiled by tsc. `npm test` leaves this project out (it
      // names the projects it runs): its typecheck step compiles the same files with the same
      // tsconfig, and a second tsc beside the test workers costs tens of seconds of CPU on 2 cores.
      // `npx vitest run` keeps them.
      {
        extends: true,
        test: { name: 'types', include: [], typecheck: { enabled: true, only: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' } },
      },
    ],
  },
})
