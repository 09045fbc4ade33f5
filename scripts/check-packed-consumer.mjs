#!/usr/bin/env node
// Proves what a consumer of the published tarball gets: packs the package (after `npm run build`),
// installs the tarball into an empty temporary project WITHOUT node-pty, then imports and requires
// the platform-free entries and ptykit/testing. Any attempt to load node-pty would throw there.
// It also checks what a debugger meets in the tarball: every `sourceMappingURL` names a shipped map,
// and every source a map names is either shipped or embedded (`sourcesContent`) — the maps name
// `../src/*.ts`, which the package does not ship.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * What a debugger stepping into the installed package would miss: a `sourceMappingURL` naming no
 * shipped file, and a source a map names that is neither shipped nor embedded in `sourcesContent`.
 * No maps shipped at all is fine (nothing then points anywhere).
 */
function sourceMapProblems(pkgDir) {
  const problems = []
  let sources = 0
  const scripts = fs.readdirSync(pkgDir, { recursive: true }).map(String).filter((file) => /\.[cm]?js$/.test(file))
  for (const file of scripts) {
    const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(fs.readFileSync(path.join(pkgDir, file), 'utf8'))?.[1]
    if (url === undefined || url.startsWith('data:')) continue
    const mapFile = path.join(pkgDir, path.dirname(file), url)
    if (!fs.existsSync(mapFile)) {
      problems.push(`${file}: its sourceMappingURL ${url} is not in the tarball`)
      continue
    }
    const map = JSON.parse(fs.readFileSync(mapFile, 'utf8'))
    map.sources.forEach((source, n) => {
      sources++
      if (typeof map.sourcesContent?.[n] === 'string') return
      if (!fs.existsSync(path.resolve(path.dirname(mapFile), map.sourceRoot ?? '', source))) {
        problems.push(`${path.relative(pkgDir, mapFile)}: ${source} is neither shipped nor embedded (sourcesContent)`)
      }
    })
  }
  return { problems, sources }
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ptykit-consumer-'))
try {
  // `--ignore-scripts`: `dist` is built already (by `npm run build`, or by the `prepack` of the pack
  // in check-consumer-types.mjs, which runs before this in `lint:package`); rebuilding costs ~15 s.
  const packed = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
    cwd: root,
    encoding: 'utf8',
  })
  const tarball = path.join(work, JSON.parse(packed)[0].filename)
  const pkgDir = path.join(work, 'node_modules', 'ptykit')
  fs.mkdirSync(pkgDir, { recursive: true })
  execFileSync('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1'])
  const maps = sourceMapProblems(pkgDir)
  if (maps.problems.length) {
    throw new Error(`the packed source maps point at what a consumer lacks (${maps.problems.length}):\n  ${maps.problems.slice(0, 10).join('\n  ')}`)
  }
  // The optional peers ptykit/testing uses — but never node-pty. (ptykit has no dependencies.)
  for (const dep of ['fast-check', 'pure-rand', 'vitest']) {
    const from = path.join(root, 'node_modules', dep)
    if (fs.existsSync(from)) fs.symlinkSync(from, path.join(work, 'node_modules', dep), 'dir')
  }
  fs.writeFileSync(path.join(work, 'package.json'), '{"name":"consumer","private":true}\n')

  const esm = `
    import { resolveProcessExitCause, describeTerminalExitCause } from 'ptykit/exit-cause'
    import * as contracts from 'ptykit/contracts'
    import * as spawn from 'ptykit/spawn'
    import { createPtyController } from 'ptykit'
    import { createNodePtyProvider } from 'ptykit/node-pty'
    const controller = createPtyController({ provider: createNodePtyProvider() })
    const failure = await controller.spawn({ file: 'sh' }).catch((error) => error)
    if (!/npm install node-pty/.test(String(failure?.cause?.message ?? failure?.message))) {
      throw new Error('a spawn without node-pty installed should say how to install it, got: ' + failure)
    }
    await controller.dispose()
    const cause = resolveProcessExitCause({ exitCode: 0, signal: 9 })
    if (describeTerminalExitCause(cause) !== 'Agent process killed by signal 9') throw new Error('wrong cause')
    if (typeof contracts.isPtyIncarnationId !== 'function') throw new Error('contracts missing')
    if (typeof spawn.isPtySpawnError !== 'function') throw new Error('spawn missing')
    console.log('esm ok')`
  const cjs = `
    const { resolveProcessExitCause } = require('ptykit/exit-cause')
    require('ptykit/contracts'); require('ptykit/spawn')
    const { createPtyController } = require('ptykit/controller')
    if (typeof require('ptykit').createPtyController !== 'function') throw new Error('root entry incomplete')
    // node-pty is an optional peer, loaded only on the first spawn: importing the provider is fine.
    const { createNodePtyProvider } = require('ptykit/node-pty')
    createPtyController({ provider: createNodePtyProvider() })
    if (resolveProcessExitCause({ exitCode: 3 }).exitCode !== 3) throw new Error('wrong cause')
    const loaded = Object.keys(require.cache).filter((p) => p.includes('/node_modules/node-pty/'))
    if (loaded.length) throw new Error('node-pty was loaded: ' + loaded.join(', '))
    console.log('cjs ok')`
  // CommonJS (a Jest or plain-Node suite): the fake provider must work without vitest, which is
  // ESM-only and throws when required.
  const testing = `
    const testing = require('ptykit/testing')
    const loaded = Object.keys(require.cache).filter((p) => p.includes('/node_modules/node-pty/') || p.includes('/vitest/'))
    if (loaded.length) throw new Error('loaded what it must not: ' + loaded.join(', '))
    const provider = testing.createFakePtyProvider()
    provider.spawn({ file: 'x' }).then((result) => {
      if (!provider.livePtyIds().includes(result.id)) throw new Error('fake provider did not spawn')
      console.log('testing (cjs) ok (' + Object.keys(testing).length + ' exports)')
    })`
  const testingEsm = `
    import { createFakePtyProvider, describePtyProviderConformance } from 'ptykit/testing'
    if (typeof describePtyProviderConformance !== 'function') throw new Error('conformance missing')
    const provider = createFakePtyProvider()
    const result = await provider.spawn({ file: 'x' })
    if (!provider.livePtyIds().includes(result.id)) throw new Error('fake provider did not spawn')
    console.log('testing (esm) ok')`
  // ptykit/ssh: ssh2 is an optional peer, loaded on the first connection; without it a spawn says how to install it.
  const sshEsm = `
    import { createSshProvider } from 'ptykit/ssh'
    const provider = createSshProvider({ host: '127.0.0.1', username: 'nobody', privateKey: 'unused', knownHostsPath: '/nonexistent' })
    const failure = await provider.spawn({ file: 'sh' }).catch((error) => error)
    if (failure?.code !== 'ssh2_unavailable' || !/npm install ssh2/.test(failure.message)) {
      throw new Error('a spawn without ssh2 installed should say how to install it, got: ' + failure)
    }
    console.log('ssh (esm) ok')`
  const sshCjs = `
    const { createSshProvider } = require('ptykit/ssh')
    if (typeof createSshProvider !== 'function') throw new Error('ssh entry incomplete')
    const loaded = Object.keys(require.cache).filter((p) => p.includes('/node_modules/ssh2/'))
    if (loaded.length) throw new Error('ssh2 was loaded: ' + loaded.join(', '))
    console.log('ssh (cjs) ok')`
  const run = (args) => execFileSync(process.execPath, args, { cwd: work, encoding: 'utf8' }).trim()
  const out = [
    run(['--input-type=module', '-e', esm]),
    run(['-e', cjs]),
    run(['-e', testing]),
    run(['--input-type=module', '-e', testingEsm]),
    run(['--input-type=module', '-e', sshEsm]),
    run(['-e', sshCjs]),
  ]
  console.log(`check-packed-consumer: OK (${out.join('; ')}; node-pty not installed in the consumer; ${maps.sources} mapped sources, all embedded or shipped)`)
} catch (error) {
  console.error(`check-packed-consumer: FAILED\n${error.stderr ?? ''}${error.stdout ?? ''}${error.message}`)
  process.exitCode = 1
} finally {
  fs.rmSync(work, { recursive: true, force: true })
}
