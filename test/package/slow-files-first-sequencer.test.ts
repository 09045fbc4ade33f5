import { describe, expect, it } from 'vitest'
import type { TestSpecification, Vitest } from 'vitest/node'
import { KNOWN_SLOW_TEST_FILES, SlowFilesFirstSequencer } from '../support/slow-files-first-sequencer.js'

const ROOT = '/repo'

/** A sequencer over files of the given sizes; `durations` stands for vitest's cache of an earlier run. */
function sortFiles(sizes: Record<string, number>, durations: Record<string, number> = {}): Promise<string[]> {
  const project = { name: '', config: { isolate: true, sequence: { groupOrder: 0 } } }
  const ctx = {
    config: { root: ROOT },
    cache: {
      getFileStats: (key: string) => ({ size: sizes[key.slice(1)] ?? 0 }),
      getFileTestResults: (key: string) => {
        const duration = durations[key.slice(1)]
        return duration === undefined ? undefined : { duration, failed: false }
      },
    },
  } as unknown as Vitest
  const files = Object.keys(sizes).map((file) => ({ project, moduleId: `${ROOT}/${file}` }) as unknown as TestSpecification)
  return new SlowFilesFirstSequencer(ctx).sort(files).then((sorted) => sorted.map((file) => file.moduleId.slice(ROOT.length + 1)))
}

describe('SlowFilesFirstSequencer (vitest.config.ts)', () => {
  const [slowest, secondSlowest] = KNOWN_SLOW_TEST_FILES as [string, string]
  const sizes = { 'test/big.test.ts': 30_000, [secondSlowest]: 100, 'test/medium.test.ts': 10_000, [slowest]: 4_000 }

  it('without cached durations, starts the known slow files first (in their order), then the rest largest first', async () => {
    expect(await sortFiles(sizes)).toEqual([slowest, secondSlowest, 'test/big.test.ts', 'test/medium.test.ts'])
  })

  it('with every duration cached, keeps vitest’s longest-first order', async () => {
    const durations = { 'test/big.test.ts': 1, [secondSlowest]: 2, 'test/medium.test.ts': 90, [slowest]: 50 }
    expect(await sortFiles(sizes, durations)).toEqual(['test/medium.test.ts', slowest, secondSlowest, 'test/big.test.ts'])
  })
})
