// Two spawns under one id at once (a host app's double click, or a retry that overlaps the first
// try). Found by an audit (helper-200): on the SSH provider both passed the id check — the first
// one's session enters the table only once its channel opened — so both programs ran under one
// id; the table kept the second, and the first, one that ignores the hang-up, outlived the
// provider's disposal. The second is now refused `pty_id_in_use` while the first is starting.
import { describe, expect, it } from 'vitest'
import { createSshProvider } from 'ptykit/ssh'
import { waitFor } from '../node-pty/pty-test-support.js'
import { killTagged, sshOptions, taggedProcesses, useSshd } from './ssh-test-support.js'

const sshd = useSshd()
const TAG = `same-id-${process.pid}`

describe('SSH: two spawns under one id at once', () => {
  it('starts one, refuses the other pty_id_in_use, and leaves nothing running after dispose', async () => {
    const provider = createSshProvider(sshOptions(sshd()))
    try {
      const spawn = () => provider.spawn({ sessionId: 'twice', file: '/bin/sh', args: ['-c', "trap '' HUP; exec sleep 600"], env: { PTYKIT_SWEEP_TAG: TAG } })
      const outcomes = await Promise.allSettled([spawn(), spawn()])
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected'])
      expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'pty_id_in_use', ptyId: 'twice' })
      // One program: waited for as `sleep` (past its trap), as the link-drop tests wait — read right
      // after the spawn's reply, the program may be in its `exec` and its environment unreadable
      // for a moment (a clean-clone CI run counted 0 once).
      await waitFor(() => (taggedProcesses(TAG).filter(({ comm }) => comm === 'sleep').length === 1 ? true : undefined), 'the program to run as sleep')
      expect(taggedProcesses(TAG)).toHaveLength(1)
      await provider.dispose()
      expect(taggedProcesses(TAG)).toEqual([])
    } finally {
      await provider.dispose()
      killTagged(TAG)
    }
  }, 60_000)
})
