/**
 * Internal (not exported from `ptykit/contracts`): resolve after `ms`. `unref`: the timer keeps
 * nothing alive on its own — for background waits (a reconnect's back-off, a grace inside a call
 * whose own caller holds the process) that must not keep an app from exiting.
 */
export function delay(ms: number, options: { unref?: boolean } = {}): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    if (options.unref === true) timer.unref?.()
  })
}
