import { describe, expect, it } from 'vitest'
import type { PtyDataEvent } from '../../src/contracts/index.js'
import { InFlightEventBuffer } from '../../src/controller/in-flight-event-buffer.js'
import { createFakePtyProvider } from '../../src/testing/index.js'

const provider = createFakePtyProvider({ scheduling: 'manual' })
const data = (id: string, text: string): { kind: 'data'; provider: typeof provider; event: PtyDataEvent } => ({
  kind: 'data',
  provider,
  event: { id, data: text },
})
const all = (): boolean => true

describe('InFlightEventBuffer', () => {
  it('holds nothing while no spawn is in flight', () => {
    const buffer = new InFlightEventBuffer(100, () => undefined)
    expect(buffer.hold(data('p', 'a'))).toBe(false)
    const spawn = buffer.begin()
    expect(buffer.take(provider, 'p', spawn.since, all)).toEqual([])
  })

  it('drops an event once every spawn in flight at its arrival has ended, even while later spawns run', () => {
    const buffer = new InFlightEventBuffer(100, () => undefined)
    const first = buffer.begin()
    expect(buffer.hold(data('p', 'early'))).toBe(true)
    const second = buffer.begin()
    buffer.hold(data('p', 'late'))
    buffer.end(first.token)
    buffer.end(first.token)
    // The second spawn never sees output from before it started, and 'early' is gone for good.
    expect(buffer.take(provider, 'p', 0, all).map((held) => held.event)).toEqual([{ id: 'p', data: 'late' }])
    buffer.end(second.token)
    buffer.begin()
    expect(buffer.take(provider, 'p', 0, all)).toEqual([])
  })

  it('takes only the matching id, provider and events, leaving the rest held', () => {
    const other = createFakePtyProvider({ scheduling: 'manual' })
    const buffer = new InFlightEventBuffer(100, () => undefined)
    const spawn = buffer.begin()
    buffer.hold(data('p', 'a'))
    buffer.hold(data('q', 'b'))
    buffer.hold({ kind: 'data', provider: other, event: { id: 'p', data: 'c' } })
    buffer.hold(data('p', 'skip'))
    const taken = buffer.take(provider, 'p', spawn.since, (held) => held.kind === 'data' && held.event.data !== 'skip')
    expect(taken.map((held) => held.event)).toEqual([{ id: 'p', data: 'a' }])
    expect(buffer.take(provider, 'p', spawn.since, all).map((held) => held.event)).toEqual([{ id: 'p', data: 'skip' }])
  })

  it('caps held output: the oldest output goes first, its place and size kept, exits stay, and the drop is reported once per episode', () => {
    const dropped: { id: string }[] = []
    const buffer = new InFlightEventBuffer(5, (event) => dropped.push(event))
    const spawn = buffer.begin()
    buffer.hold(data('p', 'abc'))
    buffer.hold({ kind: 'exit', provider, event: { id: 'x', code: 0 } })
    buffer.hold(data('p', 'def'))
    buffer.hold(data('p', 'ghi'))
    expect(dropped).toEqual([{ id: 'p', data: 'abc' }])
    // One mark for the run of p's dropped output (x's exit between does not split it), then what is still held.
    expect(buffer.take(provider, 'p', spawn.since, all).map((held) => [held.kind, held.event])).toEqual([
      ['dropped', { id: 'p', chars: 6 }],
      ['data', { id: 'p', data: 'ghi' }],
    ])
    expect(buffer.take(provider, 'x', spawn.since, all)).toHaveLength(1)
    buffer.end(spawn.token)
    const again = buffer.begin()
    buffer.hold(data('p', '123456'))
    expect(dropped).toHaveLength(2)
    expect(buffer.take(provider, 'p', again.since, all).map((held) => [held.kind, held.event])).toEqual([['dropped', { id: 'p', chars: 6 }]])
  })

  it('merges the marks of one PTY’s consecutive drops, and keeps another PTY’s apart', () => {
    const buffer = new InFlightEventBuffer(4, () => undefined)
    const spawn = buffer.begin()
    buffer.hold(data('p', 'ab'))
    buffer.hold(data('p', 'cd'))
    buffer.hold(data('q', 'ef'))
    buffer.hold(data('p', 'gh'))
    buffer.hold(data('p', 'ij'))
    expect(buffer.take(provider, 'p', spawn.since, all).map((held) => [held.kind, held.event])).toEqual([
      ['dropped', { id: 'p', chars: 4 }],
      ['data', { id: 'p', data: 'gh' }],
      ['data', { id: 'p', data: 'ij' }],
    ])
    expect(buffer.take(provider, 'q', spawn.since, all).map((held) => [held.kind, held.event])).toEqual([['dropped', { id: 'q', chars: 2 }]])
  })

  it('does not merge output dropped after a spawn began into a mark from before it', () => {
    const buffer = new InFlightEventBuffer(4, () => undefined)
    buffer.begin()
    buffer.hold(data('p', 'ab'))
    buffer.hold(data('p', 'cd'))
    // p's re-attach starts: it may claim what arrives from now on, and only that.
    const spawn = buffer.begin()
    buffer.hold(data('p', 'ef'))
    buffer.hold(data('p', 'gh'))
    buffer.hold(data('p', 'ij'))
    expect(buffer.take(provider, 'p', spawn.since, all).map((held) => [held.kind, held.event])).toEqual([
      ['dropped', { id: 'p', chars: 2 }],
      ['data', { id: 'p', data: 'gh' }],
      ['data', { id: 'p', data: 'ij' }],
    ])
  })

  it('hands every event no spawn claimed to onDiscard when the last spawn that could have is over', () => {
    const discarded: unknown[] = []
    const buffer = new InFlightEventBuffer(100, () => undefined, (held) => discarded.push(held.event))
    const first = buffer.begin()
    buffer.hold(data('p', 'early'))
    const second = buffer.begin()
    buffer.hold(data('p', 'late'))
    buffer.end(first.token)
    expect(discarded).toEqual([{ id: 'p', data: 'early' }])
    expect(buffer.take(provider, 'p', second.since, all)).toHaveLength(1)
    buffer.hold(data('q', 'unclaimed'))
    buffer.end(second.token)
    expect(discarded).toEqual([{ id: 'p', data: 'early' }, { id: 'q', data: 'unclaimed' }])
  })
})
