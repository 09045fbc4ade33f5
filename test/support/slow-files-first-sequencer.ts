// The order vitest starts test files in, when it has no durations from an earlier run (a clean
// clone: CI runs `npm ci`, which wipes vitest's cache under node_modules/.vite).
//
// With two workers the suite ends when the last file ends, so the long files must start first.
// vitest's own order without a cache is by file size, largest first, which starts the bench smoke
// test (a small file, the longest run) two thirds of the way through: it then runs alone at the
// end. Here the files known to be slow start first, in the order below; the rest keep vitest's order.
// Once vitest has durations for every file (any later run), its own longest-first order is used.
import { relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * The slowest files (8–26 s each on 2 cores: real processes, sshd, Chromium), slowest first — as
 * measured in a whole quiet `npm test` on 8 Dec 2026 (vitest's results cache); refresh it from
 * that cache when the order changes much.
 */
export const KNOWN_SLOW_TEST_FILES = [
  'test/bench/bench-smoke.test.ts',
  'test/pty-host/pty-host-frame-limit.test.ts',
  'examples/web-terminal/web-terminal.browser.test.ts',
  'test/node-pty/late-calls-at-scale.test.ts',
  'test/ssh/ssh-provider.failures.test.ts',
  'test/multihost/three-hosts-at-scale.test.ts',
  'test/ssh/stalled-link.test.ts',
  'test/pty-host/predecessor-journal.test.ts',
  'test/pty-host/pty-host-flow.test.ts',
  'test/node-pty/node-pty-provider.exit.test.ts',
  'test/ssh/reconnect-after-retries.test.ts',
  'test/node-pty/node-pty-provider.conformance.test.ts',
  'examples/custom-provider.test.ts',
]

/** vitest's sequencer, except that without cached durations the known slow files start first. */
export class SlowFilesFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const root = this.ctx.config.root
    const path = (file: TestSpecification): string => relative(root, file.moduleId).split('\\').join('/')
    const cached = sorted.every((file) => this.ctx.cache.getFileTestResults(`${file.project.name}:${relative(root, file.moduleId)}`))
    if (cached) return sorted
    const rank = (file: TestSpecification): number => {
      const index = KNOWN_SLOW_TEST_FILES.indexOf(path(file))
      return index === -1 ? KNOWN_SLOW_TEST_FILES.length : index
    }
    // Array.prototype.sort is stable: the other files keep vitest's order.
    return [...sorted].sort((a, b) => rank(a) - rank(b))
  }
}
