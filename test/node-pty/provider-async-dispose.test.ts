import { describe, expect, it } from 'vitest'
import { createNodePtyProvider, type NodePtyProvider } from 'ptykit/node-pty'
import { createFakePtyProvider, type FakePtyProvider } from 'ptykit/testing'
import { expectNoChildLeftBehind, isDead } from './pty-test-support.js'

expectNoChildLeftBehind(async () => undefined)

describe('await using a provider', () => {
  it('the node-pty provider stops its PTYs when the block ends', async () => {
    let escaped: NodePtyProvider | undefined
    let pid: number | undefined
    {
      await using provider = createNodePtyProvider()
      escaped = provider
      const reply = await provider.spawn({ sessionId: 'await-using', file: '/bin/sleep', args: ['30'] })
      pid = reply.pid ?? undefined
      expect(isDead(pid!)).toBe(false)
    }
    expect(isDead(pid!)).toBe(true)
    await expect(escaped.spawn({ sessionId: 'after', file: '/bin/true' })).rejects.toMatchObject({ code: 'provider_disposed' })
  })

  it('the fake provider is disposed when the block ends', async () => {
    let escaped: FakePtyProvider | undefined
    {
      await using provider = createFakePtyProvider()
      escaped = provider
      await provider.spawn({ sessionId: 'a' })
    }
    expect(escaped.calls.map((call) => call.method)).toContain('dispose')
    expect(escaped.livePtyIds()).toEqual([])
  })
})
