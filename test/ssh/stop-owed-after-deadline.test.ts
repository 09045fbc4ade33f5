// A stop whose deadline passes before its program is seen gone. Found by an audit (helper-211): the
// stop's last step closes the channel; when that close landed before the deadline (the channel
// closed without an exit status, or the link dropped), the stop rejected transport_lost and was
// owed — carried out once a connection was back; when the deadline came first (a stalled link), it
// rejected shutdown_timeout and was not owed, and a program that ignores the hang-up ran on after the
// link dropped: nothing stopped it before the provider's disposal. Both are owed now.
import { afterEach, describe, expect, it } from 'vitest'
import { isSshProviderError } from 'ptykit/ssh'
import type { PtyExitEvent } from 'ptykit'
import { waitFor } from '../node-pty/pty-test-support.js'
import { isAlive, killTagged, providerThroughProxy, taggedProcesses, useSshd } from './ssh-test-support.js'

const sshd = useSshd()
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A program that ignores the hang-up (the server's, when the link drops) and sleeps; tagged `tag`. */
function hangupProof(tag: string) {
  return { file: '/bin/sh', args: ['-c', "trap '' HUP; exec sleep 300"], env: { PTYKIT_SWEEP_TAG: tag } }
}

/** Wait until `count` of `tag`'s programs run `sleep` (past their trap: a HUP then no longer ends them). */
async function sleeping(tag: string, count: number): Promise<void> {
  await waitFor(() => (taggedProcesses(tag).filter(({ comm }) => comm === 'sleep').length === count ? true : undefined), `${count} program(s) past their trap`, 60_000)
}

/** What `promise` rejected with: its code when it is the provider's error, `'resolved'` when it did not reject. */
async function outcome(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => (isSshProviderError(error) ? error.code : String(error)),
  )
}

describe('SSH: a stop whose deadline passed before its program was seen gone', () => {
  it('on a stalled link (shutdown_timeout) is carried out once the link, dropped since, is back — not left to the disposal', async () => {
    const { proxy, provider } = await providerThroughProxy(sshd(), cleanups)
    const tag = `owed-deadline-${process.pid}-${Date.now()}`
    cleanups.push(() => killTagged(tag))
    const exits: PtyExitEvent[] = []
    provider.onExit((event) => exits.push(event))
    const reply = await provider.spawn(hangupProof(tag))
    await sleeping(tag, 1)

    // Nothing crosses the link from now on: the stop's signals, its looks and its close wait in the proxy.
    proxy.freeze()
    expect(await outcome(provider.shutdown(reply.id, { timeoutMs: 300 }))).toBe('shutdown_timeout')
    // The link drops: what waited never reaches the server, which hangs the terminal up (ignored).
    proxy.dropAll()
    await waitFor(() => (provider.hasPty(reply.id) === null ? true : undefined), 'the PTY to be lost')
    expect(isAlive(reply.pid!)).toBe(true)

    // The provider reconnects by itself, looks at its lost PTYs and carries the owed stop out.
    // Before: the program ran on (the stop was not owed) until the provider's disposal.
    await waitFor(() => (!isAlive(reply.pid!) ? true : undefined), 'the owed stop to be carried out', 20_000)
    await waitFor(() => (exits.some((exit) => exit.id === reply.id) ? true : undefined), 'its exit')
    // Seen alive after the request, then ended by the provider's own stop.
    expect(exits.find((exit) => exit.id === reply.id)).toMatchObject({ cause: { kind: 'unknown', reason: 'cause_unreported' }, stopRequestedBeforeDeath: true })
    expect(taggedProcesses(tag)).toEqual([])
  }, 60_000)

  it('100 PTYs over one connection, all stopped with short deadlines as the link stalls and drops: every stop owed and carried out, nothing left once disposed', async () => {
    const COUNT = 100
    const { proxy, provider } = await providerThroughProxy(sshd(), cleanups)
    const tag = `owed-deadline-scale-${process.pid}-${Date.now()}`
    cleanups.push(() => killTagged(tag))
    const exits: PtyExitEvent[] = []
    provider.onExit((event) => exits.push(event))
    const replies: Awaited<ReturnType<typeof provider.spawn>>[] = []
    // In waves of 10: a spawn opens a channel, and each waits for its program's marker.
    for (let wave = 0; wave < COUNT / 10; wave++) replies.push(...(await Promise.all(Array.from({ length: 10 }, () => provider.spawn(hangupProof(tag))))))
    await sleeping(tag, COUNT)
    expect(new Set(replies.map(({ pid }) => pid)).size).toBe(COUNT)

    // The link stalls, then drops: none of the stops' signals, looks or closes reaches the server.
    // Half the stops have a deadline the stalled link outlasts (shutdown_timeout), half one it
    // does not (the drop comes first: transport_lost).
    proxy.freeze()
    const startedAt = performance.now()
    const stops = replies.map(({ id }, index) => outcome(provider.shutdown(id, { timeoutMs: index % 2 === 0 ? 600 : 10_000 })))
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    proxy.dropAll()
    const droppedAt = performance.now()
    const codes = await Promise.all(stops)
    const tally = codes.reduce<Record<string, number>>((counts, code) => ({ ...counts, [code]: (counts[code] ?? 0) + 1 }), {})
    expect(codes.filter((_, index) => index % 2 === 0).every((code) => code === 'shutdown_timeout'), JSON.stringify(tally)).toBe(true)
    expect(codes.filter((_, index) => index % 2 === 1).every((code) => code === 'transport_lost'), JSON.stringify(tally)).toBe(true)
    const aliveAfterStops = replies.filter(({ pid }) => isAlive(pid!)).length
    expect(aliveAfterStops).toBe(COUNT)

    await waitFor(() => (replies.every(({ pid }) => !isAlive(pid!)) ? true : undefined), 'every owed stop to be carried out', 45_000)
    const allEndedAfterDropMs = Math.round(performance.now() - droppedAt)
    await waitFor(() => (replies.every(({ id }) => exits.some((exit) => exit.id === id)) ? true : undefined), 'every exit', 15_000)
    const flagged = exits.filter((exit) => exit.stopRequestedBeforeDeath === true).length
    await provider.dispose()
    const leftAfterDispose = taggedProcesses(tag).length
    console.log(
      `[at scale] ${COUNT} PTYs: stops ${JSON.stringify(tally)} in ${Math.round(droppedAt - startedAt)} ms to the drop; ` +
        `${aliveAfterStops} alive after the stops settled; all ended ${allEndedAfterDropMs} ms after the drop; ` +
        `${exits.length} exits (${flagged} stopRequestedBeforeDeath); ${leftAfterDispose} tagged processes after dispose`,
    )
    expect(leftAfterDispose).toBe(0)
  }, 180_000)
})
