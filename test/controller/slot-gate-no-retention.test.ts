/**
 * A host that runs for days spawns through slots continuously. Each turn of the slot gate waits for
 * its turn or the controller's disposal, whichever comes first; that wait must leave nothing behind
 * once the turn came. Before, it raced the turn against one promise that settles only at dispose,
 * and every race left a reaction on it: memory grew with every slot spawn and adoption until the
 * controller was disposed.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { SlotCreateGate } from '../../src/controller/slot-adoption.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

async function heapAfterGc(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 0))
    gc()
  }
  return process.memoryUsage().heapUsed
}

describe('the slot gate over many slot spawns', () => {
  it('keeps no memory per turn once the turn is over', async () => {
    const gate = new SlotCreateGate()
    const turns = 40_000
    // Warm up (compiled code, the map's size), then measure the same number of turns again.
    for (let i = 0; i < 2_000; i++) await gate.run({ key: `warm-${i}` }, undefined, () => Promise.resolve(i))
    const before = await heapAfterGc()
    for (let i = 0; i < turns; i++) await gate.run({ key: `slot-${i}` }, undefined, () => Promise.resolve(i))
    for (let i = 0; i < turns / 4; i++) {
      const claim = gate.claim({ key: `claimed-${i}` })
      await gate.run({ key: `claimed-${i}` }, claim, () => Promise.resolve(i))
      claim()
    }
    const grown = (await heapAfterGc()) - before
    // Leaking, 50 000 turns kept several MB (two promises and their reactions each); not leaking, noise.
    expect(grown).toBeLessThan(1_500_000)
    gate.close()
  })

  it('still ends a wait for a turn when the controller is disposed', async () => {
    const gate = new SlotCreateGate()
    const slot = { key: 'busy' }
    gate.claim(slot) // never released
    let ran = false
    const waiting = gate.run(slot, undefined, async () => {
      ran = true
    })
    await new Promise((resolve) => setTimeout(resolve, 5))
    expect(ran).toBe(false)
    gate.close()
    await waiting
    expect(ran).toBe(true)
    // And a wait that starts after the close does not wait either.
    await gate.run(slot, undefined, () => Promise.resolve())
  })
})
