/**
 * The rule of `PtyProvider.dispose` (`refuseCallsAfterDispose`, src/contracts/disposed-provider.ts):
 * a call after `dispose()` is refused `provider_disposed`, naming the method — and, on every
 * provider alike, the PTY the call named (its first argument; none for `spawn` or a listing).
 *
 * Found in review (helper-214): SSH's refusal carried the called id in `ptyId`, node-pty's, the pty
 * host's and the fake's did not (`ptyId: undefined`), so a host that reads which PTY a refusal
 * concerns (to drop that terminal's view) got it from one provider only.
 */
import { createNodePtyProvider } from 'ptykit/node-pty'
import { createSshProvider } from 'ptykit/ssh'
import { createFakePtyProvider } from 'ptykit/testing'
import { describe, expect, it } from 'vitest'
import { hostFixture, providerDisposedAfter, useCleanups } from './pty-host/pty-host-test-support.js'
import { sshOptions, useSshd } from './ssh/ssh-test-support.js'

const cleanups = useCleanups()
const sshd = useSshd()

/** The provider surface these checks call. */
type Provider = {
  spawn(options: { file: string; args: string[] }): Promise<{ id: string }>
  write(id: string, data: string): unknown
  hasPty?(id: string): unknown
  getCwd?(id: string): Promise<unknown>
  listProcesses(): Promise<unknown>
  dispose?(): Promise<void>
}

/** What `call` refused with: a synchronous throw or a rejection (a resolved answer is returned as is, and fails the match). */
async function refusalOf(call: () => unknown): Promise<unknown> {
  try {
    return await call()
  } catch (error) {
    return error
  }
}

/** Spawn a PTY on `provider`, dispose it, and check what the calls after the dispose carry. */
async function expectRefusalsNameThePty(provider: Provider): Promise<void> {
  const { id } = await provider.spawn({ file: '/bin/sh', args: ['-c', 'exec sleep 30'] })
  await provider.dispose!()
  const refused = (method: string, ptyId: string | undefined) => expect.objectContaining({ code: 'provider_disposed', message: expect.stringContaining(`\`${method}\``), ptyId })
  expect(await refusalOf(() => provider.write('abc', 'x'))).toEqual(refused('write', 'abc'))
  expect(await refusalOf(() => provider.hasPty!('abc'))).toEqual(refused('hasPty', 'abc'))
  expect(await refusalOf(() => provider.getCwd!('abc'))).toEqual(refused('getCwd', 'abc'))
  // The PTY it held names itself the same way.
  expect(await refusalOf(() => provider.write(id, 'x'))).toEqual(refused('write', id))
  // No PTY named: none carried.
  expect(await refusalOf(() => provider.spawn({ file: '/bin/sh', args: [] }))).toEqual(refused('spawn', undefined))
  expect(await refusalOf(() => provider.listProcesses())).toEqual(refused('listProcesses', undefined))
}

describe('after dispose(), every provider’s refusal names the PTY the call named', () => {
  it('node-pty', async () => {
    await expectRefusalsNameThePty(createNodePtyProvider())
  })

  it('the pty host', async () => {
    const { socketPath } = hostFixture(cleanups)
    await expectRefusalsNameThePty(providerDisposedAfter(cleanups, socketPath))
  }, 30_000)

  it('SSH (OpenSSH on loopback)', async () => {
    const provider = createSshProvider(sshOptions(sshd()))
    cleanups.push(() => provider.dispose())
    await expectRefusalsNameThePty(provider)
  }, 30_000)

  it('the fake (as the real providers: a host tested on it reads the same refusal)', async () => {
    const provider = createFakePtyProvider()
    await expectRefusalsNameThePty(provider)
    // A hung spawn that dispose() overtook still names its own id (unchanged).
    const hung = createFakePtyProvider()
    hung.scriptNextSpawn({ hang: true, id: 'hung' })
    const overtaken = hung.spawn({}).catch((error: unknown) => error)
    await hung.dispose()
    expect(await overtaken).toMatchObject({ code: 'provider_disposed', method: 'spawn', ptyId: 'hung' })
  })
})
