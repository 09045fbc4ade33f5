// The SSH provider's first use made while the process has no descriptor free. Node's module
// resolution remembers a package.json it could not read (EMFILE) as absent for the life of the
// process: a load of ssh2 tried then failed as "not installed" — and so did every later one, once
// descriptors were back.
import { execFile } from 'node:child_process'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import { beforeAll, describe, expect, it } from 'vitest'
import { nodeArgsFor } from '../support/node-entry-bundle.js'
import { requirePrlimit } from '../support/prlimit.js'

/** The fixture, bundled at the file's top (the bundler's service process is not a test's child). */
const FIRST_USE_ARGS = nodeArgsFor(resolve(import.meta.dirname, 'fixtures/first-use-without-descriptors.ts'))

describe('loading ssh2 out of descriptors', () => {
  beforeAll(requirePrlimit)

  it('is refused naming the descriptor limit, and the next use loads ssh2', async () => {
    const { stdout } = await promisify(execFile)('prlimit', ['--nofile=256:256', process.execPath, ...FIRST_USE_ARGS], { timeout: 15_000 })
    const { first, second } = JSON.parse(stdout) as Record<'first' | 'second', { code: string; message: string }>
    expect(first.code).toBe('connection_failed')
    expect(first.message).toMatch(/file descriptor.*EMFILE/)
    // ssh2 loaded: the spawn got as far as the (refused) TCP connection.
    expect(second.code).toBe('connection_failed')
    expect(second.message).toMatch(/ECONNREFUSED/)
  })
})
