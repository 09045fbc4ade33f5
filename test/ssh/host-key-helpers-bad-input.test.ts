// The exported host-key helpers, called from plain JavaScript with wrong arguments (helper-155's
// audit): a TypeError naming the argument and showing the value — never a raw "key.readUInt32BE is
// not a function" or "Cannot read properties of undefined (reading 'toString')", and never a quiet
// wrong answer (`knownHostsName('h', '22')` was `[h]:22`, a name no known_hosts line has for port 22).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { knownHostsName, lookUpKnownHosts, sshKeyFingerprint, sshKeyType } from '../../src/ssh/index.js'

const key = Buffer.concat([Buffer.from([0, 0, 0, 11]), Buffer.from('ssh-ed25519'), Buffer.alloc(36, 7)])
const notAString = fc.anything({ withBigInt: true }).filter((value) => typeof value !== 'string')
const notABuffer = fc.oneof(fc.anything({ withBigInt: true }), fc.string(), fc.uint8Array()).filter((value) => !Buffer.isBuffer(value))

function thrownBy(call: () => unknown): unknown {
  try {
    call()
  } catch (error) {
    return error
  }
  return undefined
}

describe('ssh host-key helpers refuse wrong arguments by name', () => {
  it('a key that is not a Buffer', () => {
    fc.assert(
      fc.property(notABuffer, (value) => {
        for (const call of [() => sshKeyType(value as never), () => sshKeyFingerprint(value as never), () => lookUpKnownHosts('', 'h', value as never)]) {
          const error = thrownBy(call)
          expect(error).toBeInstanceOf(TypeError)
          expect((error as Error).message).toMatch(/^Expected the `key` argument to be a Buffer \(a host key in SSH wire format\), got /)
        }
      }),
    )
  })

  it('a known_hosts text, host name or host that is not a string', () => {
    fc.assert(
      fc.property(notAString, fc.constantFrom('text', 'name', 'host'), (value, argument) => {
        const call =
          argument === 'text' ? () => lookUpKnownHosts(value as never, 'h', key) : argument === 'name' ? () => lookUpKnownHosts('', value as never, key) : () => knownHostsName(value as never, 22)
        const error = thrownBy(call)
        expect(error).toBeInstanceOf(TypeError)
        expect((error as Error).message).toMatch(new RegExp(`^Expected the \`${argument}\` argument to be a string, got `))
      }),
    )
  })

  it('a port that is not a TCP port number', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything({ withBigInt: true }).filter((value) => !Number.isInteger(value)), fc.constantFrom<unknown>('22', 0, -1, 65_536, 1.5, Number.NaN)), (port) => {
        const error = thrownBy(() => knownHostsName('h', port as never))
        expect(error).toBeInstanceOf(TypeError)
        expect((error as Error).message).toMatch(/^Expected the `port` argument to be a TCP port \(an integer from 1 to 65535\), got /)
      }),
    )
    expect(knownHostsName('h', 22)).toBe('h')
    expect(knownHostsName('h', 2222)).toBe('[h]:2222')
    expect(sshKeyType(key)).toBe('ssh-ed25519')
    expect(lookUpKnownHosts(`h ssh-ed25519 ${key.toString('base64')}\n`, 'h', key)).toBe('match')
  })
})
