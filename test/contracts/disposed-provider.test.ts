/**
 * The dispose rule every bundled provider applies (`refuseCallsAfterDispose`,
 * src/contracts/disposed-provider.ts): once disposed, a promise-answering method rejects and any
 * other throws, both `provider_disposed` naming the method.
 *
 * Found in review (helper-213): the pty host's `forgetExits` was kept a rejection only because it
 * happens to be written `async` (the rule looks at the function's constructor) — it was not in the
 * list its commit said it was added to. Written as a plain function returning a promise (as the pty
 * host's `spawn` is), or downlevelled by a consumer's bundler, it threw synchronously after dispose,
 * escaping a caller's `await forgetExits(…).catch(…)`.
 */
import { describe, expect, it } from 'vitest'
import { refuseCallsAfterDispose } from '../../src/contracts/disposed-provider.js'

function refusal(method: string): Error {
  return Object.assign(new Error(`Cannot call \`${method}\` on a disposed provider`), { code: 'provider_disposed' })
}

describe('refuseCallsAfterDispose', () => {
  it('rejects (never throws) each listed promise-answering method after dispose, async or not — forgetExits and listExits included', async () => {
    for (const method of ['spawn', 'attach', 'shutdown', 'listProcesses', 'listExits', 'forgetExits', 'getCwd', 'clearBuffer']) {
      let disposed = false
      // A plain function returning a promise: no `async` keyword to go by.
      const provider = refuseCallsAfterDispose({ [method]: () => Promise.resolve('answered') } as Record<string, () => unknown>, () => disposed, refusal)
      await expect(provider[method]!()).resolves.toBe('answered')
      disposed = true
      let answer: unknown
      expect(() => (answer = provider[method]!()), `${method} after dispose must not throw synchronously`).not.toThrow()
      await expect(answer).rejects.toMatchObject({ code: 'provider_disposed', message: expect.stringContaining(`\`${method}\``) })
    }
  })

  it('hands the refusal the PTY the call named (its first argument, when a string), none for spawn or a listing', async () => {
    const seen: [string, string | undefined][] = []
    const provider = refuseCallsAfterDispose(
      { write: () => true, getCwd: async () => '/', spawn: async () => ({}), listProcesses: async () => [], forgetExits: async () => 0 },
      () => true,
      (method, ptyId) => {
        seen.push([method, ptyId])
        return refusal(method)
      },
    )
    expect(() => (provider.write as (id: string, data: string) => unknown)('abc', 'x')).toThrow()
    await expect((provider.getCwd as (id: string) => Promise<string>)('abc')).rejects.toThrow()
    await expect((provider.spawn as (options: unknown) => Promise<unknown>)('abc')).rejects.toThrow()
    await expect(provider.listProcesses()).rejects.toThrow()
    await expect((provider.forgetExits as (exits: unknown) => Promise<number>)([{ id: 'abc' }])).rejects.toThrow()
    expect(seen).toEqual([
      ['write', 'abc'],
      ['getCwd', 'abc'],
      ['spawn', undefined],
      ['listProcesses', undefined],
      ['forgetExits', undefined],
    ])
  })

  it('throws from any other method, keeps `this`, and leaves getters, dispose, detach, isConnected and the subscriptions answering', () => {
    let disposed = false
    const provider = refuseCallsAfterDispose(
      {
        size: 3,
        get connected() {
          return !disposed
        },
        resize(this: { size: number }, cols: number): number {
          return this.size + cols
        },
        dispose: () => 'disposed',
        detach: () => 'detached',
        isConnected: () => false,
        onExit: () => 'unsubscribe',
      },
      () => disposed,
      refusal,
    )
    expect(provider.resize(2)).toBe(5)
    disposed = true
    expect(() => provider.resize(2)).toThrow(expect.objectContaining({ code: 'provider_disposed', message: expect.stringContaining('`resize`') }))
    expect(provider.connected).toBe(false)
    expect([provider.dispose(), provider.detach(), provider.isConnected(), provider.onExit()]).toEqual(['disposed', 'detached', false, 'unsubscribe'])
  })
})
