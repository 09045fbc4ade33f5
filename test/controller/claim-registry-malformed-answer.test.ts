/**
 * A host may plug in its own claim registry (`claims`). Its `ensure` answer is what a claimed
 * spawn publishes; one the pipeline cannot read — an owner whose `ptyId` or `hostId` is not a
 * non-empty string, an `incarnationId` neither `null`, absent nor an incarnation id, a
 * `disposition` other than `created`/`adopted`, a `pid` neither absent, `null` nor a positive
 * integer (published as the PTY's pid: -1 would have a host signal every process it may), no
 * owner, no answer, or a `created` owner that is
 * not the PTY this call started — refuses the spawn with `claim_ownership_unknown`, naming the
 * registry's `ensure` and showing the answer: nothing is published, the PTY this call started is
 * stopped and its claim released, and the claim works again once the registry answers well.
 */
import { describe, expect, it } from 'vitest'
import { describeValue } from '../../src/contracts/describe-value.js'
import { createClaimedOwnerRegistry, createInMemoryPtyRuntime, isPtySpawnError, type ClaimedOwnerRegistry, type EnsureClaimResult } from '../../src/spawn/index.js'
import { createHarness } from './controller-harness.js'

const claim = { key: 'agent' }

const MANGLED: [string, (real: EnsureClaimResult) => unknown][] = [
  ['a numeric ptyId', (real) => ({ ...real, owner: { ...real.owner, ptyId: 5 } })],
  ['an empty ptyId', (real) => ({ ...real, owner: { ...real.owner, ptyId: '' } })],
  ['a numeric hostId', (real) => ({ ...real, owner: { ...real.owner, hostId: 7 } })],
  ['no hostId', (real) => ({ ...real, owner: { ...real.owner, hostId: undefined } })],
  ['a numeric incarnationId', (real) => ({ ...real, owner: { ...real.owner, incarnationId: 42 } })],
  ['an empty incarnationId', (real) => ({ ...real, owner: { ...real.owner, incarnationId: '' } })],
  ['a pid of -1', (real) => ({ ...real, owner: { ...real.owner, pid: -1 } })],
  ['a pid of 0', (real) => ({ ...real, owner: { ...real.owner, pid: 0 } })],
  ['a pid of NaN', (real) => ({ ...real, owner: { ...real.owner, pid: Number.NaN } })],
  ['a pid of 1.5', (real) => ({ ...real, owner: { ...real.owner, pid: 1.5 } })],
  ['a pid of "42"', (real) => ({ ...real, owner: { ...real.owner, pid: '42' } })],
  ['an unknown disposition', (real) => ({ ...real, disposition: 'joined' })],
  ['no owner', (real) => ({ disposition: real.disposition })],
  ['undefined', () => undefined],
  ['a number', () => 5],
]

/**
 * A registry over the in-memory one whose `ensure` answers through `mangle` while `bad` is set
 * (and which ignores `runSettled` when `ignoresRunSettled`).
 */
function registryAnswering(mangle: (real: EnsureClaimResult) => unknown, options: { ignoresRunSettled?: boolean } = {}) {
  const inner = createClaimedOwnerRegistry()
  let bad = false
  const answers: unknown[] = []
  const claims: ClaimedOwnerRegistry = {
    ensure: async (args) => {
      // A registry that ignores `runSettled` promotes the creator's owner as soon as its spawn settles.
      const real = await inner.ensure(options.ignoresRunSettled === true ? { ...args, runSettled: undefined } : args)
      const answer = bad ? mangle(real) : real
      answers.push(answer)
      return answer as EnsureClaimResult
    },
    find: (c) => inner.find(c),
    release: (ptyId, generation) => inner.release(ptyId, generation),
    owners: () => inner.owners(),
  }
  return { inner, claims, answers, spoil: () => (bad = true), heal: () => (bad = false) }
}

function expectRefusal(error: unknown, answer: unknown, outcome: string): void {
  expect(isPtySpawnError(error)).toBe(true)
  expect(error).toMatchObject({ code: 'claim_ownership_unknown', outcome })
  expect((error as Error).message).toContain(`Claim "agent": the claim registry's ensure answered ${describeValue(answer)}`)
}

describe('a claim registry whose ensure answers what the pipeline cannot read', () => {
  it.each(MANGLED)('%s, adopting the live owner: refused, nothing published, the owner runs on and is adopted once the registry answers well', async (_, mangle) => {
    const { inner, claims, answers, spoil, heal } = registryAnswering(mangle)
    const runtime = createInMemoryPtyRuntime()
    const h = createHarness({ controller: { claims, runtime } })
    const owner = await h.run(h.controller.spawn({ claim }))
    const spawnEvents = h.events.filter((entry) => entry.type === 'spawn').length
    spoil()
    const error = await h.run(h.controller.spawn({ claim })).catch((e: unknown) => e)
    // Before: a PTY of id 5 (or "") or of incarnation 42 was published, host 7 failed with a
    // TypeError leaving a registration behind, and an unreadable answer was `exited_during_start`.
    expectRefusal(error, answers.at(-1), 'not_started')
    expect(h.events.filter((entry) => entry.type === 'spawn').length).toBe(spawnEvents)
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toHaveLength(1)
    const left = runtime.inspect()
    expect(left.heldLeases).toEqual([])
    expect(left.pendingRegistrations).toEqual([])
    expect(left.registeredPtys).toEqual([{ ptyId: owner.id, incarnationId: owner.incarnationId }])
    expect(h.provider.getPty(owner.id)?.live).toBe(true)
    expect(inner.owners()).toMatchObject([{ claimKey: 'agent', ptyId: owner.id }])
    heal()
    const adopted = await h.run(h.controller.spawn({ claim }))
    expect(adopted).toMatchObject({ id: owner.id, incarnationId: owner.incarnationId, isReattach: true, claimDisposition: 'adopted' })
    await h.controller.dispose()
  })

  it.each(MANGLED)('%s, for the owner this call created: refused, its process stopped and its claim released; the next spawn creates the owner', async (_, mangle) => {
    const { inner, claims, answers, spoil, heal } = registryAnswering(mangle)
    const runtime = createInMemoryPtyRuntime()
    const h = createHarness({ controller: { claims, runtime } })
    spoil()
    const error = await h.run(h.controller.spawn({ claim })).catch((e: unknown) => e)
    expectRefusal(error, answers.at(-1), 'rolled_back')
    const started = h.provider.calls.filter((call) => call.method === 'spawn')
    expect(started).toHaveLength(1)
    const startedId = (error as { ptyId?: string }).ptyId!
    expect(h.provider.getPty(startedId)?.live).toBe(false)
    expect(h.events.filter((entry) => entry.type === 'spawn')).toEqual([])
    expect(inner.owners()).toEqual([])
    const left = runtime.inspect()
    expect(left.heldLeases).toEqual([])
    expect(left.pendingRegistrations).toEqual([])
    expect(left.registeredPtys).toEqual([])
    heal()
    const created = await h.run(h.controller.spawn({ claim }))
    expect(created).toMatchObject({ isReattach: false, claimDisposition: 'created' })
    expect(inner.owners()).toMatchObject([{ claimKey: 'agent', ptyId: created.id }])
    await h.controller.dispose()
  })

  it('a created owner that is not the PTY this call started: refused, the started process stopped (before: published, its claim left naming the other PTY)', async () => {
    const { inner, claims, answers, spoil } = registryAnswering((real) => ({ ...real, owner: { ...real.owner, ptyId: 'someone-else' } }))
    const h = createHarness({ controller: { claims } })
    spoil()
    const error = await h.run(h.controller.spawn({ claim })).catch((e: unknown) => e)
    expectRefusal(error, answers.at(-1), 'rolled_back')
    expect((error as Error).message).toContain(`it names PTY "someone-else" created, but this call's spawn started "${(error as { ptyId?: string }).ptyId}"`)
    expect(h.provider.getPty((error as { ptyId?: string }).ptyId!)?.live).toBe(false)
    expect(inner.owners()).toEqual([])
    await h.controller.dispose()
  })

  it('adopted, though the registry ran this call\'s spawn: refused, the started process stopped (before: the spawn answered the other owner, its own process left running)', async () => {
    const { inner, claims, answers, spoil } = registryAnswering((real) => ({ ...real, disposition: 'adopted', owner: { ...real.owner, ptyId: 'someone-else' } }))
    const h = createHarness({ controller: { claims } })
    spoil()
    const error = await h.run(h.controller.spawn({ claim })).catch((e: unknown) => e)
    expectRefusal(error, answers.at(-1), 'rolled_back')
    const started = (error as { ptyId?: string }).ptyId!
    expect((error as Error).message).toContain(`it names PTY "someone-else" adopted, but it ran this call's spawn, which started "${started}"`)
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toHaveLength(1)
    expect(h.provider.getPty(started)?.live).toBe(false)
    expect(inner.owners()).toEqual([])
    await h.controller.dispose()
  })

  it('for the owner this call created, with a registry that ignores runSettled: the rollback releases the claim of the stopped PTY', async () => {
    const { inner, claims, answers, spoil } = registryAnswering((real) => ({ ...real, owner: { ...real.owner, hostId: 7 } }), { ignoresRunSettled: true })
    const h = createHarness({ controller: { claims } })
    spoil()
    const error = await h.run(h.controller.spawn({ claim })).catch((e: unknown) => e)
    expectRefusal(error, answers.at(-1), 'rolled_back')
    expect(h.provider.getPty((error as { ptyId?: string }).ptyId!)?.live).toBe(false)
    // Not left naming a stopped PTY (a later ensure would re-prove it, find it gone, and start over).
    expect(inner.owners()).toEqual([])
    await h.controller.dispose()
  })

  it('an adopted owner on a host with no provider here: execution_owner_unavailable, and the live owner is left as it was (before: its execution context was rewritten to that host, then a TypeError)', async () => {
    const { claims, answers, spoil } = registryAnswering((real) => ({ ...real, owner: { ...real.owner, hostId: 'ssh:gone' } }))
    const runtime = createInMemoryPtyRuntime()
    const h = createHarness({ controller: { claims, runtime } })
    const owner = await h.run(h.controller.spawn({ claim }))
    const before = runtime.inspect()
    spoil()
    const error = await h.run(h.controller.spawn({ claim })).catch((e: unknown) => e)
    expect(answers.at(-1)).toMatchObject({ disposition: 'adopted', owner: { ptyId: owner.id, hostId: 'ssh:gone' } })
    expect(isPtySpawnError(error)).toBe(true)
    expect(error).toMatchObject({ code: 'execution_owner_unavailable', outcome: 'not_started', ptyId: owner.id, message: 'No provider is registered for host "ssh:gone": it is unreachable' })
    expect(runtime.inspect()).toEqual(before)
    expect(h.provider.getPty(owner.id)?.live).toBe(true)
    await h.controller.dispose()
  })

  it('a pid of null (not reported) or a positive integer is accepted', async () => {
    for (const pid of [null, 4242]) {
      const { claims, spoil } = registryAnswering((real) => ({ ...real, owner: { ...real.owner, pid } }))
      const h = createHarness({ controller: { claims } })
      const owner = await h.run(h.controller.spawn({ claim }))
      spoil()
      const adopted = await h.run(h.controller.spawn({ claim }))
      // (The controller tracks the owner already: it keeps the pid its own start reported.)
      expect(adopted).toMatchObject({ id: owner.id, pid: owner.pid, isReattach: true, claimDisposition: 'adopted' })
      await h.controller.dispose()
    }
  })

  it('an incarnationId of null (an empty SQL or JSON column) is read as not attested, as for a slot store', async () => {
    const { claims, spoil } = registryAnswering((real) => ({ ...real, owner: { ...real.owner, incarnationId: null } }))
    const h = createHarness({ controller: { claims } })
    const owner = await h.run(h.controller.spawn({ claim }))
    spoil()
    const adopted = await h.run(h.controller.spawn({ claim }))
    expect(adopted).toMatchObject({ id: owner.id, isReattach: true, claimDisposition: 'adopted' })
    expect(adopted).not.toHaveProperty('incarnationId')
    await h.controller.dispose()
  })
})

describe('a host listing whose claim owner rows cannot be read (the import of claim owners)', () => {
  it.each([
    ['an incarnationId of 42', { id: 'pty-x', claimKey: 'agent', incarnationId: 42 }, 'its incarnationId is not a non-empty string, got 42 (number)'],
    ['an id of 5', { id: 5, claimKey: 'agent', incarnationId: 'i-1' }, 'row 0 of the listing has no PTY id (a non-empty string), got 5 (number)'],
    ['a claimKey of null', { id: 'pty-x', claimKey: null, incarnationId: 'i-1' }, 'its claimKey is not a non-empty string, got null (null)'],
  ])('%s: claim_ownership_unknown, its message showing the value (before: only its cause did), and nothing started', async (_, row, shown) => {
    const h = createHarness()
    Object.assign(h.provider, { listProcesses: () => Promise.resolve([row]) })
    const error = await h.run(h.controller.spawn({ claim })).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'claim_ownership_unknown', outcome: 'not_started' })
    expect((error as Error).message).toContain('Host "local" could not list its claim owners, so no claim can be decided: Provider fake: ')
    expect((error as Error).message).toContain(shown)
    expect(h.provider.calls.filter((call) => call.method === 'spawn')).toEqual([])
    await h.controller.dispose()
  })
})
