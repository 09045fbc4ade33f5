/**
 * Node's `MaxListenersExceededWarning`s emitted while a test runs: `watch()` starts listening,
 * `seen()` waits for warnings already emitted to be delivered (`process.emitWarning` delivers on a
 * `nextTick`) and answers them. Listening stops after each test of the file that calls this.
 */
import { afterEach } from 'vitest'

export function maxListenersWarnings(): { watch(): void; seen(): Promise<Error[]> } {
  const warnings: Error[] = []
  const onWarning = (warning: Error): void => {
    if (warning.name === 'MaxListenersExceededWarning') warnings.push(warning)
  }
  afterEach(() => {
    process.off('warning', onWarning)
    warnings.length = 0
  })
  return {
    watch: () => void process.on('warning', onWarning),
    seen: async () => {
      await new Promise((resolve) => setImmediate(resolve))
      return [...warnings]
    },
  }
}
