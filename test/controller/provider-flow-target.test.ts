import { describe, expect, it } from 'vitest'
import type { PtyProvider } from '../../src/contracts/index.js'
import type { ControllerCore, ControllerReport } from '../../src/controller/controller-core.js'
import { OutputDelivery } from '../../src/controller/output-delivery.js'
import { ProviderFlowTarget } from '../../src/controller/provider-flow-target.js'
import type { PtyRecord } from '../../src/controller/pty-record.js'

type Report = Parameters<ControllerReport>

/** A provider stand-in that records its flow calls; `throws` makes them throw. */
function providerRecording(throws = false) {
  const calls: string[] = []
  const provider = {
    name: 'stand-in',
    pauseProducer: (id: string) => {
      calls.push(`pause ${id}`)
      if (throws) throw new Error('pause failed')
    },
    resumeProducer: (id: string) => {
      calls.push(`resume ${id}`)
      if (throws) throw new Error('resume failed')
    },
  } as unknown as PtyProvider
  return { provider, calls }
}

function reports() {
  const seen: Report[] = []
  const report: ControllerReport = (...args) => {
    seen.push(args)
  }
  // The core's parts a flow target uses: where it reports, and the providers whose disposal was reported.
  const core = { report, disposedProvidersReported: new WeakSet(), detachedProvidersReported: new WeakSet() } as unknown as ControllerCore
  return { seen, report, core }
}

describe('ProviderFlowTarget', () => {
  it('pauses and resumes its own PTY through its provider', () => {
    const { provider, calls } = providerRecording()
    const { seen, core } = reports()
    const a = new ProviderFlowTarget(core, provider, 'a')
    const b = new ProviderFlowTarget(core, provider, 'b')
    a.pause()
    b.pause()
    a.resume()
    expect(calls).toEqual(['pause a', 'pause b', 'resume a'])
    expect(seen).toEqual([])
  })

  it('reports a provider that throws as flow_control_failed, naming the method, and never throws', () => {
    const { provider } = providerRecording(true)
    const { seen, core } = reports()
    const target = new ProviderFlowTarget(core, provider, 'p1')
    expect(() => target.pause()).not.toThrow()
    expect(() => target.resume()).not.toThrow()
    expect(seen.map(([code, message, cause, ptyId]) => [code, message, (cause as Error).message, ptyId])).toEqual([
      ['flow_control_failed', 'Provider stand-in threw from pauseProducer', 'pause failed', 'p1'],
      ['flow_control_failed', 'Provider stand-in threw from resumeProducer', 'resume failed', 'p1'],
    ])
  })

  it('tolerates a provider without flow control', () => {
    const { seen, core } = reports()
    const target = new ProviderFlowTarget(core, { name: 'plain' } as unknown as PtyProvider, 'p2')
    target.pause()
    target.resume()
    expect(seen).toEqual([])
  })

  it('reports a consumer that stopped acknowledging, naming the PTY', () => {
    const { provider } = providerRecording()
    const { seen, core } = reports()
    new ProviderFlowTarget(core, provider, 'p3').notAcknowledging()
    expect(seen).toHaveLength(1)
    expect(seen[0]?.[0]).toBe('consumer_not_acknowledging')
    expect(seen[0]?.[1]).toContain("PTY p3's producer was paused for the maximum hold")
    expect(seen[0]?.[3]).toBe('p3')
  })

  it('carries no function of its own: every PTY shares the prototype methods (issue 18, memory per idle PTY)', () => {
    const { provider } = providerRecording()
    const { core } = reports()
    const a = new ProviderFlowTarget(core, provider, 'a')
    const b = new ProviderFlowTarget(core, provider, 'b')
    expect(Object.getOwnPropertyNames(a)).toEqual([])
    expect(a.pause).toBe(b.pause)
    expect(a.resume).toBe(b.resume)
    expect(a.notAcknowledging).toBe(b.notAcknowledging)
  })

  it("is what the controller's output delivery hands each new incarnation", () => {
    const { provider, calls } = providerRecording()
    const { report } = reports()
    const delivery = new OutputDelivery({ options: { dataBatchMs: 0 }, report, flow: null } as unknown as ControllerCore)
    const a = delivery.targetFor(provider, 'a')
    const b = delivery.targetFor(provider, 'b')
    expect(a).toBeInstanceOf(ProviderFlowTarget)
    expect(a.pause).toBe(b.pause)
    b.pause()
    expect(calls).toEqual(['pause b'])
  })

  it('is followed by flow control once its record is committed, before any output, when its provider takes part (issue 18: off the first chunk)', () => {
    const { provider } = providerRecording()
    const { report } = reports()
    const tracked: unknown[] = []
    const flow = { track: (target: unknown) => tracked.push(target) }
    const delivery = new OutputDelivery({ options: { dataBatchMs: 0 }, report, flow } as unknown as ControllerCore)
    const a = delivery.targetFor(provider, 'a')
    // Making the target follows nothing: a record that is never committed leaves no state behind.
    expect(tracked).toEqual([])
    delivery.follow({ provider, flowTarget: a } as unknown as PtyRecord)
    expect(tracked).toEqual([a])
    // A provider without pause/resume has no producer flow control: nothing to follow.
    const plain = { name: 'plain' } as unknown as PtyProvider
    delivery.follow({ provider: plain, flowTarget: delivery.targetFor(plain, 'b') } as unknown as PtyRecord)
    expect(tracked).toEqual([a])
  })

})
