#!/usr/bin/env node
// Proves what a consumer of the published tarball gets: packs the package (after `npm run build`),
// installs the tarball into an empty temporary project WITHOUT node-pty, then imports and requires
// the platform-free entries and ptykit/testing. Any attempt to load node-pty would throw there.
// A second project gets the same tarball and NONE of the optional peers (no vitest, no fast-check):
// there a small `node:test` suite, one ESM file and one CommonJS file, drives the fake provider
// from ptykit/testing/fake under the real controller — what a Jest or `node:test` suite does.
// There, importing ptykit/testing must fail with a TestingPeerUnavailableError that names fast-check,
// the install command and ptykit/testing/fake — not Node's bare "Cannot find package 'fast-check'".
// A third project has fast-check but no vitest: there a `node:test` suite (ESM and CommonJS) runs
// every provider conformance check against the fake, as a Jest or `node:test` provider author does.
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

/** Extracts the tarball as `dir/node_modules/ptykit` of a new project `dir`; returns the package's directory. */
function installTarball(dir, tarball) {
  const pkgDir = path.join(dir, 'node_modules', 'ptykit')
  fs.mkdirSync(pkgDir, { recursive: true })
  execFileSync('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1'])
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"consumer","private":true}\n')
  return pkgDir
}

/**
 * The suite a Jest or `node:test` user writes, as `node:test` files: the fake provider under the
 * real controller, its test controls, its typed errors and the manual clock, all from
 * ptykit/testing/fake. `imports` is its head (`import` or `require` lines); each file first
 * proves its project has no vitest and no fast-check to find.
 */
const fakeSuite = (kind, imports, loadTesting) => `
${imports}

test('${kind}: ptykit/testing without fast-check names the missing peer, the install command and ptykit/testing/fake', async () => {
  const failure = await (${loadTesting})().then(() => new Error('ptykit/testing loaded without fast-check'), (error) => error)
  assert.equal(failure.name, 'TestingPeerUnavailableError', String(failure))
  assert.equal(isTestingPeerUnavailableError(failure), true)
  assert.equal(failure.code, 'testing_peer_unavailable')
  assert.equal(failure.peer, 'fast-check')
  assert.match(failure.message, /needs the optional peer dependency \`fast-check\`, which is not installed/)
  assert.ok(failure.message.includes('npm i -D "fast-check@^4.0.0" "vitest@>=3.0.0"'), failure.message)
  assert.ok(failure.message.includes('\`ptykit/testing/fake\`'), failure.message)
})

test('${kind}: the optional peers are not installed here', () => {
  for (const peer of ['vitest', 'fast-check']) {
    assert.throws(() => resolvePackage(peer), { code: 'MODULE_NOT_FOUND' }, peer + ' is installed in the peer-free consumer')
  }
})

test('${kind}: a SIGKILL reads as a signal, through the controller', async () => {
  const provider = createFakePtyProvider()
  const controller = createPtyController({ provider })
  const causes = []
  controller.on('exit', (exit) => causes.push(exit.cause))
  provider.scriptNextSpawn({ output: ['working'], exit: { exitCode: 0, signal: 9 } })
  await controller.spawn({ file: 'agent' })
  await provider.settle()
  assert.deepEqual(causes, [{ kind: 'signaled', signal: 9 }])
  await controller.dispose()
})

test('${kind}: an unconfirmed stop is stop_unverified on the manual clock', async () => {
  const clock = createManualClock()
  const provider = createFakePtyProvider()
  const controller = createPtyController({ provider, clock })
  provider.scriptNextSpawn({ shutdown: 'never_confirm' })
  const { id } = await controller.spawn({})
  const causes = []
  controller.on('exit', (exit) => causes.push(exit.cause))
  assert.equal(controller.kill(id), true)
  await provider.settle()
  clock.advance(STOP_UNCONFIRMED_AFTER_MS)
  await provider.settle()
  assert.deepEqual(causes, [{ kind: 'unknown', reason: 'stop_unverified' }])
  assert.deepEqual(provider.livePtyIds(), [id])
  provider.setShutdownBehaviour(id, 'confirm')
  await controller.dispose()
})

test('${kind}: an attach to no live PTY is a typed absence', async () => {
  const provider = createFakePtyProvider()
  const failure = await provider.spawn({ attachOnly: true, sessionId: 'gone' }).catch((error) => error)
  assert.ok(failure instanceof FakePtyAbsentError, String(failure))
  assert.equal(isFakePtyAbsentError(failure), true)
  assert.equal(failure.code, 'pty_absent')
  await provider.dispose()
})
`

/** How many `test(...)` each suite file registers: the run must report exactly these as passed. */
const FAKE_SUITE_TESTS = 5

/**
 * Installs the tarball into `dir` with no optional peer at all, and runs the fake's `node:test`
 * suite there as ESM and as CommonJS. Returns the summary line.
 */
function fakeWithoutPeers(dir, tarball) {
  installTarball(dir, tarball)
  const esmImports = `
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { STOP_UNCONFIRMED_AFTER_MS, createPtyController } from 'ptykit/controller'
import { FakePtyAbsentError, createFakePtyProvider, createManualClock, isFakePtyAbsentError, isTestingPeerUnavailableError } from 'ptykit/testing/fake'
const resolvePackage = createRequire(import.meta.url).resolve`
  const cjsImports = `
const { test } = require('node:test')
const assert = require('node:assert/strict')
const { STOP_UNCONFIRMED_AFTER_MS, createPtyController } = require('ptykit/controller')
const { FakePtyAbsentError, createFakePtyProvider, createManualClock, isFakePtyAbsentError, isTestingPeerUnavailableError } = require('ptykit/testing/fake')
const resolvePackage = require.resolve`
  fs.writeFileSync(path.join(dir, 'fake.test.mjs'), fakeSuite('esm', esmImports, "() => import('ptykit/testing')"))
  fs.writeFileSync(path.join(dir, 'fake.test.cjs'), fakeSuite('cjs', cjsImports, "async () => require('ptykit/testing')"))
  const passed = runNodeTest(dir, ['fake.test.mjs', 'fake.test.cjs'], 2 * FAKE_SUITE_TESTS, "the fake provider's node:test suite, in a consumer without vitest and fast-check,")
  return `testing/fake without vitest and fast-check: ${passed} node:test tests pass (esm, cjs)`
}

/** Runs `node --test` on `files` in `dir`; fails unless exactly `expected` tests pass. Returns that count. */
function runNodeTest(dir, files, expected, what) {
  let tap
  try {
    tap = execFileSync(process.execPath, ['--test', '--test-reporter=tap', ...files], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    throw new Error(`${what} fails:\n${error.stdout ?? ''}${error.stderr ?? ''}`)
  }
  const passed = Number(/^# pass (\d+)$/m.exec(tap)?.[1])
  if (passed !== expected) throw new Error(`${what} passed ${passed} tests, expected ${expected} (ESM and CJS):\n${tap}`)
  return passed
}

/**
 * What a provider author under `node:test` or Jest writes: every conformance check of
 * ptykit/testing, one test each, against the fake — in a project with fast-check but no vitest.
 * Each file also proves that a broken provider fails a check with an AssertionError, and that
 * describePtyProviderConformance (which alone needs vitest) says so with a typed error.
 */
const checksSuite = (kind, imports) => `
${imports}

const drivers = {
  spawnEcho: (text) => ({ metadata: fakeScriptMetadata({ output: [text], exit: { exitCode: 0 } }) }),
  spawnLongRunning: () => ({}),
  spawnExit: (code) => ({ metadata: fakeScriptMetadata({ exit: { exitCode: code } }) }),
  spawnSignaled: (signal) => ({ metadata: fakeScriptMetadata({ exit: { exitCode: 0, signal } }) }),
  killFromOutside: (result, provider) => provider.emitExit(result.id, { exitCode: 0, signal: 9 }),
  stopReadingInput: (result, provider) => provider.setInputHeld(result.id, true),
}
const checks = ptyProviderConformanceChecks(drivers)

test('${kind}: vitest is not installed here', () => {
  assert.throws(() => resolvePackage('vitest'), { code: 'MODULE_NOT_FOUND' }, 'vitest is installed in the consumer without vitest')
})

for (const check of checks) {
  test('${kind}: ' + check.name, () => runPtyProviderConformanceCheck(check, () => createFakePtyProvider(), drivers))
}

test('${kind}: a provider that reads back a stale size fails the resize check with an AssertionError', async () => {
  const stale = () => ({ ...createFakePtyProvider(), getSize: () => ({ cols: 80, rows: 24 }) })
  const resize = checks.find((check) => check.name.includes('reflects a resize'))
  await assert.rejects(runPtyProviderConformanceCheck(resize, stale, drivers), {
    name: 'AssertionError',
    message: 'expected {"cols":80,"rows":24} (object) to deeply equal {"cols":100,"rows":30} (object): at .cols, 80 (number) where 100 (number) was expected',
  })
})

test('${kind}: describePtyProviderConformance names vitest, the one peer it needs', () => {
  assert.throws(() => describePtyProviderConformance('fake', () => createFakePtyProvider(), drivers), (error) => {
    assert.equal(error.name, 'TestingPeerUnavailableError')
    assert.equal(error.peer, 'vitest')
    assert.match(error.message, /runPtyProviderConformanceCheck/)
    return true
  })
})
`

/** How many `test(...)` each checks file registers besides one per conformance check. */
const CHECKS_SUITE_EXTRA_TESTS = 3

/**
 * Installs the tarball into `dir` with fast-check but not vitest, and runs every conformance check
 * under `node:test` there, as ESM and as CommonJS. Returns the summary line.
 */
function checksWithoutVitest(dir, tarball, checkCount) {
  installTarball(dir, tarball)
  for (const dep of ['fast-check', 'pure-rand']) fs.symlinkSync(path.join(root, 'node_modules', dep), path.join(dir, 'node_modules', dep), 'dir')
  const names = 'createFakePtyProvider, describePtyProviderConformance, fakeScriptMetadata, ptyProviderConformanceChecks, runPtyProviderConformanceCheck'
  const esmImports = `
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { ${names} } from 'ptykit/testing'
const resolvePackage = createRequire(import.meta.url).resolve`
  const cjsImports = `
const { test } = require('node:test')
const assert = require('node:assert/strict')
const { ${names} } = require('ptykit/testing')
const resolvePackage = require.resolve`
  fs.writeFileSync(path.join(dir, 'checks.test.mjs'), checksSuite('esm', esmImports))
  fs.writeFileSync(path.join(dir, 'checks.test.cjs'), checksSuite('cjs', cjsImports))
  const expected = 2 * (checkCount + CHECKS_SUITE_EXTRA_TESTS)
  const passed = runNodeTest(dir, ['checks.test.mjs', 'checks.test.cjs'], expected, 'the conformance checks under node:test, in a consumer without vitest,')
  return `testing without vitest: ${checkCount} conformance checks pass under node:test (${passed} tests, esm, cjs)`
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
  // Two consumer projects side by side, never one inside the other: Node looks for a package in
  // every node_modules up the tree, so the peers of the first must not be above the second.
  const consumer = path.join(work, 'with-peers')
  const pkgDir = installTarball(consumer, tarball)
  const maps = sourceMapProblems(pkgDir)
  if (maps.problems.length) {
    throw new Error(`the packed source maps point at what a consumer lacks (${maps.problems.length}):\n  ${maps.problems.slice(0, 10).join('\n  ')}`)
  }
  // The optional peers ptykit/testing uses — but never node-pty. (ptykit has no dependencies.)
  for (const dep of ['fast-check', 'pure-rand', 'vitest']) {
    const from = path.join(root, 'node_modules', dep)
    if (fs.existsSync(from)) fs.symlinkSync(from, path.join(consumer, 'node_modules', dep), 'dir')
  }

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
    // The peer-free entry hands out the very same fake: a suite may mix the two imports.
    if (require('ptykit/testing/fake').createFakePtyProvider !== testing.createFakePtyProvider) throw new Error('ptykit/testing/fake has its own copy of the fake')
    const provider = testing.createFakePtyProvider()
    provider.spawn({ file: 'x' }).then((result) => {
      if (!provider.livePtyIds().includes(result.id)) throw new Error('fake provider did not spawn')
      console.log('testing (cjs) ok (' + Object.keys(testing).length + ' exports)')
    })`
  const testingEsm = `
    import { FakePtyAbsentError, createFakePtyProvider, describePtyProviderConformance } from 'ptykit/testing'
    import * as fake from 'ptykit/testing/fake'
    if (typeof describePtyProviderConformance !== 'function') throw new Error('conformance missing')
    if (fake.createFakePtyProvider !== createFakePtyProvider || fake.FakePtyAbsentError !== FakePtyAbsentError) {
      throw new Error('ptykit/testing/fake has its own copy of the fake')
    }
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
  // How many checks the node:test suites of checksWithoutVitest must each run (their drivers).
  const checkCount = `
    const { fakeScriptMetadata, ptyProviderConformanceChecks } = require('ptykit/testing')
    const spawn = () => ({ metadata: fakeScriptMetadata({}) })
    console.log(ptyProviderConformanceChecks({ spawnEcho: spawn, spawnLongRunning: spawn, spawnExit: spawn, spawnSignaled: spawn, killFromOutside: () => undefined, stopReadingInput: () => undefined }).length)`
  // vitest installed, but not running this code (a node:test or Jest suite in a project that has
  // vitest too): describePtyProviderConformance says what to do, not vitest's internal TypeError.
  const outsideVitest = `
    import { createFakePtyProvider, describePtyProviderConformance, fakeScriptMetadata } from 'ptykit/testing'
    const spawn = () => ({ metadata: fakeScriptMetadata({}) })
    let failure
    try {
      describePtyProviderConformance('fake', () => createFakePtyProvider(), { spawnEcho: spawn, spawnLongRunning: spawn, spawnExit: spawn })
    } catch (error) {
      failure = error
    }
    if (failure?.name !== 'TestingPeerUnavailableError' || failure.peer !== 'vitest' || !/, which is installed but could not register a suite /.test(failure.message)) {
      throw new Error('describePtyProviderConformance outside a vitest run threw ' + (failure?.stack ?? String(failure)))
    }
    console.log('describePtyProviderConformance outside a vitest run (esm): typed error ok')`
  // Every entry gives `import` and `require` the same names: the two bundles are built apart, and a
  // name one format lacks is an export a consumer of that format cannot reach (loading an entry
  // loads no optional peer: node-pty and ssh2 load on first use, and fast-check is linked above).
  const entries = Object.keys(JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')).exports)
    .filter((key) => key !== './package.json')
    .map((key) => (key === '.' ? 'ptykit' : 'ptykit/' + key.slice(2)))
  const exportParity = `
    import { createRequire } from 'node:module'
    const require = createRequire(process.cwd() + '/')
    const names = (module) => Object.keys(module).filter((name) => name !== 'default' && name !== '__esModule').sort()
    const entries = ${JSON.stringify(entries)}
    let total = 0
    for (const entry of entries) {
      const esm = names(await import(entry))
      const cjs = names(require(entry))
      const onlyEsm = esm.filter((name) => !cjs.includes(name))
      const onlyCjs = cjs.filter((name) => !esm.includes(name))
      if (esm.length === 0 || onlyEsm.length > 0 || onlyCjs.length > 0) {
        throw new Error(entry + ': import and require give different names (only import: ' + onlyEsm.join(', ') + '; only require: ' + onlyCjs.join(', ') + ')')
      }
      total += esm.length
    }
    console.log('import and require give the same ' + total + ' names over ' + entries.length + ' entries')`
  const run = (args) => execFileSync(process.execPath, args, { cwd: consumer, encoding: 'utf8' }).trim()
  const out = [
    run(['--input-type=module', '-e', exportParity]),
    run(['--input-type=module', '-e', esm]),
    run(['-e', cjs]),
    run(['-e', testing]),
    run(['--input-type=module', '-e', testingEsm]),
    run(['--input-type=module', '-e', outsideVitest]),
    run(['--input-type=module', '-e', sshEsm]),
    run(['-e', sshCjs]),
    fakeWithoutPeers(path.join(work, 'without-peers'), tarball),
    checksWithoutVitest(path.join(work, 'without-vitest'), tarball, Number(run(['-e', checkCount]))),
  ]
  console.log(`check-packed-consumer: OK (${out.join('; ')}; node-pty not installed in the consumer; ${maps.sources} mapped sources, all embedded or shipped)`)
} catch (error) {
  console.error(`check-packed-consumer: FAILED\n${error.stderr ?? ''}${error.stdout ?? ''}${error.message}`)
  process.exitCode = 1
} finally {
  fs.rmSync(work, { recursive: true, force: true })
}
