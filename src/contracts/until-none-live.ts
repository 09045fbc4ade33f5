/**
 * Resolves once none of `sessions` is live any more (`isLive` false for each), checked now and each
 * time `watchers` are called (after each exit: a closing pty host's, a disposing node-pty provider's). Never rejects;
 * a caller bounds it.
 *
 * Why linear: the sessions still waited for are kept in a `Set`, in order, and each check drops
 * those at its front that ended until it finds one live — every session is looked at once more
 * than the checks that found it live at the front, so `n` sessions ending cost O(n) calls of
 * `isLive` in all. Before, each exit looked at every session still waited for (`some`): a close
 * with many late sessions did quadratic work.
 */
export function untilNoneLive<T>(sessions: Iterable<T>, isLive: (session: T) => boolean, watchers: Set<() => void>): Promise<void> {
  const waited = new Set(sessions)
  return new Promise((resolve) => {
    const check = (): void => {
      for (const session of waited) {
        if (isLive(session)) return
        waited.delete(session)
      }
      watchers.delete(check)
      resolve()
    }
    watchers.add(check)
    check()
  })
}
