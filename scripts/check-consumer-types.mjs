#!/usr/bin/env node
// Proves the published types work in every TypeScript setup a consumer has. It
//
// 1. packs the package with `npm pack` (its `prepack` script builds `dist` first: a marker file
//    left in `dist` beforehand must be gone from the tarball) and checks the tarball has every file
//    `exports` names;
// 2. runs `attw` on the tarball, full profile (node10, node16 CJS and ESM, bundler);
// 3. installs the tarball offline into an empty project and checks the install pulled in nothing
//    else (no typed-emitter, no rxjs: the event-emitter types are inlined at build time);
// 4. compiles, against the installed declarations, with `strict` and without `skipLibCheck`, under
//    NodeNext (ESM), NodeNext (CJS), Node16 (ESM), Bundler, and Node10 (CJS), and NodeNext (ESM)
//    with the oldest TypeScript supported (5.0.4, installed from the registry into
//    node_modules/.cache on first use; the declarations only):
//    - every ```ts (or ```typescript) fence of README.md and of every guide (docs/*.md), each as its
//      own module. Names a fence uses without defining come from `consumer-types/doc-context.ts`
//      (the reader's context: `controller`, `id`, `terminalView`…). A fence's body is wrapped in an
//      async function (imports stay at the top), so top-level `await` also compiles as CommonJS.
//      A guide's own names come from `consumer-types/doc-context.<guide>.ts` when it exists (they
//      win over doc-context.ts's: the testing guide's `provider` is the fake), and a fence's
//      relative import `./name.js` from `consumer-types/name.ts` (the reader's module the guide
//      builds). A fence that quotes a file of this repository, which that file's own compile
//      checks, says so with a `<!-- excerpt: path -->` line right before it: its code lines must
//      be found in that file, in order (lines left out and comments are not compared).
//      A fence opts out with a `<!-- not-compiled -->` line right before it, or `// @noCompile`
//      as its first line — for a fragment that is not meant to compile (say why next to it);
//    - `consumer-types/event-payloads.ts`: the event payload types (`@ts-expect-error` on wrong
//      fields, so a listener parameter that became `any` fails);
//    - `consumer-types/disposables.ts`: `using` / `await using` of every public disposable (not
//      with the oldest TypeScript, whose syntax predates it);
//    - `consumer-types/forwarded-undefined.ts` (and `-testing.ts`, where ptykit/testing's peers
//      resolve): a host forwarding `T | undefined` values into every optional property of every
//      public input, which `exactOptionalPropertyTypes` (on in every setting, as in many hosts)
//      refuses unless the property says `| undefined`;
//    and, as a browser bundle compiles them (Bundler, `lib` ES2023 + DOM, no Node types), the
//    platform-free entries exit-cause, contracts and spawn;
// 5. extracts the tarball into a second project with NO vitest and NO fast-check (a Jest or
//    `node:test` suite) and compiles `consumer-types/fake-without-peers.ts` (ptykit/testing/fake,
//    under the real controller) there under NodeNext (ESM and CJS), Node16 (CJS), Bundler and Node10;
// 6. loads, with Node, every package import of every sample from an ES module of the NodeNext (ESM)
//    setting, and fails on a name Node does not give: the types of a CommonJS package may declare a
//    named export that an ES module cannot take at run time (`import { Terminal } from
//    '@xterm/headless'` compiles, then throws "does not provide an export named 'Terminal'").
//
// Offline after `npm ci` and one run (the old TypeScript is then cached): typescript, @types/node, vitest and fast-check come from this repository's
// node_modules (symlinked into the fixture). Run it alone with `node scripts/check-consumer-types.mjs`;
// with PTYKIT_KEEP_FIXTURE=1 it keeps its fixture project (for `npx tsc -p <setting dir>`).
import { execFile, execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  contextNames,
  contextReexports,
  excerptMismatch,
  extractSamples,
  moduleSpecifiers,
  runtimeImports,
  runtimeImportsProbe,
  sampleModule,
} from './consumer-types/doc-samples.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const fixtureSources = path.join(root, 'scripts', 'consumer-types')
/** README.md and every guide: a sample in any of them is what a user copies. */
const SAMPLE_DOCS = [
  'README.md',
  ...fs
    .readdirSync(path.join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
]
const STALE_MARKER = 'STALE-BUILD-MARKER.txt'

/** The settings: a directory each, with its own package.json `type` and tsconfig. */
const SETTINGS = [
  { name: 'nodenext-esm', type: 'module', module: 'NodeNext', moduleResolution: 'NodeNext' },
  { name: 'nodenext-cjs', type: 'commonjs', module: 'NodeNext', moduleResolution: 'NodeNext' },
  { name: 'node16-esm', type: 'module', module: 'Node16', moduleResolution: 'Node16' },
  { name: 'bundler', type: 'module', module: 'ESNext', moduleResolution: 'Bundler' },
  // The default of `"module": "CommonJS"`: no `exports` support; `typesVersions` maps the subpaths.
  // vitest and fast-check publish no types Node10 can resolve, so samples importing them (directly
  // or through ptykit/testing) are not compiled here; nor the sample that default-imports
  // @xterm/headless, as an ES module must (docs/controller.md), which Node10 without
  // `esModuleInterop` refuses (its CommonJS readers take the named export, as the guide says).
  {
    name: 'node10-cjs',
    type: 'commonjs',
    module: 'CommonJS',
    moduleResolution: 'Node10',
    skipSamplesImporting: ['vitest', 'fast-check', 'ptykit/testing', '@xterm/headless'],
  },
  // The oldest TypeScript the published types promise (README "Requirements"): a consumer's
  // compiler is often older than ours, and a declaration written with a newer feature (a `const`
  // type parameter is 5.0, `NoInfer` 5.4) breaks it while every newer setting stays green.
  // The declarations only (every entry imported, and the event payloads): the guides' samples may
  // use newer syntax (`await using` is 5.2) that a consumer on 5.0 would not write.
  { name: 'nodenext-esm-ts5.0', type: 'module', module: 'NodeNext', moduleResolution: 'NodeNext', typescriptVersion: '5.0.4', declarationsOnly: true },
  // A browser bundle (the web terminal's page): no Node types, the DOM's. The platform-free
  // entries (check-browser-bundle.mjs bundles them for the browser) must compile there; the others
  // use Node's globals (`Buffer`, `NodeJS.*`, `Symbol.asyncDispose`), and the README says so.
  {
    name: 'browser-platform-free',
    type: 'module',
    module: 'ESNext',
    moduleResolution: 'Bundler',
    lib: ['ES2023', 'DOM'],
    types: [],
    declarationsOnly: true,
    entries: ['ptykit/exit-cause', 'ptykit/contracts', 'ptykit/spawn'],
  },
  // A Jest or `node:test` suite: no vitest and no fast-check anywhere. ptykit/testing/fake must
  // resolve whole without them (ptykit/testing names their types); its fixture alone is compiled.
  ...[
    { name: 'nodenext-esm', type: 'module', module: 'NodeNext', moduleResolution: 'NodeNext' },
    { name: 'nodenext-cjs', type: 'commonjs', module: 'NodeNext', moduleResolution: 'NodeNext' },
    { name: 'node16-cjs', type: 'commonjs', module: 'Node16', moduleResolution: 'Node16' },
    { name: 'bundler', type: 'module', module: 'ESNext', moduleResolution: 'Bundler' },
    { name: 'node10-cjs', type: 'commonjs', module: 'CommonJS', moduleResolution: 'Node10' },
  ].map((setting) => ({ ...setting, name: `${setting.name}-without-peers`, withoutPeers: true })),
]

/** The fixture compiled where the optional peers are not installed. */
const WITHOUT_PEERS_FIXTURE = 'fake-without-peers.ts'

class CheckFailure extends Error {}

const run = (command, args, options = {}) =>
  execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options })

/** `npm pack`, whose `prepack` must rebuild `dist`; returns the tarball path and its file list. */
function packFreshTarball(work) {
  const distDir = path.join(root, 'dist')
  fs.mkdirSync(distDir, { recursive: true })
  const marker = path.join(distDir, STALE_MARKER)
  fs.writeFileSync(marker, 'written before `npm pack`; a build during prepack removes it\n')
  try {
    // Not `--json`: the prepack build's output shares npm's stdout.
    const destination = fs.mkdtempSync(path.join(work, 'pack-'))
    run('npm', ['pack', '--pack-destination', destination], { cwd: root })
    const [filename] = fs.readdirSync(destination).filter((name) => name.endsWith('.tgz'))
    if (!filename) throw new CheckFailure('`npm pack` wrote no tarball')
    const tarball = path.join(destination, filename)
    const files = new Set(run('tar', ['-tzf', tarball]).split('\n').map((entry) => entry.replace(/^package\//, '')))
    if (files.has(`dist/${STALE_MARKER}`)) {
      throw new CheckFailure('`npm pack` packed the dist it found instead of building it: add `"prepack": "npm run build"`')
    }
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
    const missing = exportTargets(manifest.exports).filter((target) => !files.has(target.replace(/^\.\//, '')))
    if (missing.length) throw new CheckFailure(`the tarball lacks files that "exports" names: ${missing.join(', ')}`)
    return tarball
  } finally {
    fs.rmSync(marker, { force: true })
  }
}

function exportTargets(value) {
  if (typeof value === 'string') return value.endsWith('package.json') ? [] : [value]
  return Object.values(value ?? {}).flatMap(exportTargets)
}

/** Installs the tarball into `dir` offline; it must bring nothing but itself. */
function installTarball(dir, tarball) {
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "name": "consumer", "private": true }\n')
  run('npm', ['install', '--offline', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts', tarball], {
    cwd: dir,
  })
  const installed = fs
    .readdirSync(path.join(dir, 'node_modules'))
    .filter((entry) => !entry.startsWith('.'))
    .flatMap((entry) =>
      entry.startsWith('@') ? fs.readdirSync(path.join(dir, 'node_modules', entry)).map((e) => `${entry}/${e}`) : [entry],
    )
  const extra = installed.filter((name) => name !== 'ptykit')
  if (extra.length) {
    throw new CheckFailure(`\`npm install ptykit\` also installs ${extra.join(', ')}; a consumer must get ptykit alone`)
  }
  // What a consumer of these entries has anyway: Node's types, the optional peers of ptykit/testing,
  // and @xterm/headless, which a guide's sample renders a terminal's output with.
  for (const dep of ['@types/node', 'vitest', 'fast-check', '@xterm/headless']) {
    const from = path.join(root, 'node_modules', dep)
    if (!fs.existsSync(from)) throw new CheckFailure(`${dep} is missing from ${root}/node_modules: run \`npm ci\``)
    fs.mkdirSync(path.dirname(path.join(dir, 'node_modules', dep)), { recursive: true })
    fs.symlinkSync(from, path.join(dir, 'node_modules', dep), 'dir')
  }
  return installed
}

/**
 * The tarball as `dir/node_modules/ptykit` (extracted: `installTarball` has already proved the
 * install pulls in nothing else), with Node's types and none of ptykit/testing's optional peers.
 */
function extractTarballWithoutPeers(dir, tarball) {
  const pkgDir = path.join(dir, 'node_modules', 'ptykit')
  fs.mkdirSync(pkgDir, { recursive: true })
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "name": "consumer-without-peers", "private": true }\n')
  run('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1'])
  fs.mkdirSync(path.join(dir, 'node_modules', '@types'))
  fs.symlinkSync(path.join(root, 'node_modules', '@types', 'node'), path.join(dir, 'node_modules', '@types', 'node'), 'dir')
}

function writeSetting(dir, setting, modules) {
  fs.mkdirSync(dir)
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: setting.name, private: true, type: setting.type }))
  const compilerOptions = {
    strict: true,
    // Many hosts compile with it (this repository does): an optional input property must then say
    // `| undefined` for a host to forward a maybe-value (`forwarded-undefined.ts`).
    exactOptionalPropertyTypes: true,
    skipLibCheck: false,
    noEmit: true,
    target: 'ES2022',
    lib: setting.lib ?? ['ES2023'],
    types: setting.types ?? ['node'],
    module: setting.module,
    moduleResolution: setting.moduleResolution,
  }
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.ts'] }, null, 2))
  if (setting.withoutPeers) {
    fs.copyFileSync(path.join(fixtureSources, WITHOUT_PEERS_FIXTURE), path.join(dir, WITHOUT_PEERS_FIXTURE))
    return
  }
  const copyFixtures = () => {
    // `await using` is TypeScript 5.2: the older compiler checks the declarations, not this syntax.
    const fixtures = [
      'doc-context.ts',
      'event-payloads.ts',
      'forwarded-undefined.ts',
      ...(setting.skipSamplesImporting?.includes('ptykit/testing') ? [] : ['forwarded-undefined-testing.ts']),
      ...(setting.typescriptVersion === undefined ? ['disposables.ts'] : []),
    ]
    for (const name of fixtures) fs.copyFileSync(path.join(fixtureSources, name), path.join(dir, name))
  }
  if (setting.declarationsOnly) {
    fs.writeFileSync(path.join(dir, 'every-entry.ts'), everyEntryModule(setting.entries))
    // The doc context and the event payloads use the controller: a setting limited to some entries checks those alone.
    if (setting.entries === undefined) copyFixtures()
    return
  }
  copyFixtures()
  const contextModules = new Set()
  for (const [name, module] of modules) {
    if (module.specifiers.some((specifier) => setting.skipSamplesImporting?.includes(specifier))) continue
    fs.writeFileSync(path.join(dir, name), module.text)
    for (const context of module.contextModules) contextModules.add(context)
    // The reader's own module a guide builds and a sample imports (`./custom-provider.js`).
    for (const specifier of module.specifiers.filter((s) => s.startsWith('./'))) contextModules.add(specifier)
  }
  // A guide's own context (doc-context.<guide>.ts), where one of its samples is compiled.
  for (const context of contextModules) {
    const name = path.basename(context).replace(/\.js$/, '.ts')
    fs.copyFileSync(path.join(fixtureSources, name), path.join(dir, name))
  }
}

/** A module importing every entry of package.json `exports` (or `only` of them): their declarations are then checked whole. */
function everyEntryModule(only) {
  const { exports } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
  const entries = only ?? Object.keys(exports).filter((key) => key !== './package.json').map((key) => key.replace(/^\./, 'ptykit'))
  const lines = entries.map((entry, n) => `import * as entry${n} from '${entry}'`)
  return `${lines.join('\n')}\nexport const entries = [${entries.map((_, n) => `entry${n}`).join(', ')}]\n`
}

/**
 * The tsc of an older TypeScript, installed from the registry on first use into
 * `node_modules/.cache/` (which `npm ci` empties). Why not a devDependency (`npm:typescript@…`
 * under another name): its `tsc` and `tsserver` bins would replace the current compiler's in
 * `node_modules/.bin`, and `npm run typecheck` would compile with the old one.
 */
function olderTsc(version) {
  const prefix = path.join(root, 'node_modules', '.cache', `ptykit-typescript-${version}`)
  const tsc = path.join(prefix, 'node_modules', 'typescript', 'bin', 'tsc')
  if (!fs.existsSync(tsc)) {
    try {
      run('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', `typescript@${version}`])
    } catch (error) {
      throw new CheckFailure(`could not install typescript@${version} from the registry into ${prefix} (the check of the oldest TypeScript supported needs it once):\n${error.stderr ?? error.message}`)
    }
  }
  return tsc
}

/** Runs the repository's tsc (or the setting's older one) on one setting; resolves to its errors with sample lines mapped to the docs. */
async function typeCheck(dir, setting, modules) {
  const tsc = setting.typescriptVersion === undefined ? path.join(root, 'node_modules', 'typescript', 'bin', 'tsc') : olderTsc(setting.typescriptVersion)
  const failure = await new Promise((resolve) => {
    // Asynchronous, so the settings compile side by side.
    execFile(process.execPath, [tsc, '-p', dir, '--pretty', 'false'], { cwd: dir, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve(error === null ? null : Object.assign(error, { stdout, stderr })),
    )
  })
  if (failure === null) return []
  const output = `${failure.stdout ?? ''}${failure.stderr ?? ''}`.trim()
  if (!output) throw failure
  return output.split('\n').map((message) => {
    const at = /^([^(]+)\((\d+),(\d+)\)/.exec(message)
    const module = at && modules.get(path.basename(at[1]))
    const docLine = module?.origin[Number(at[2]) - 1]
    const where = docLine ? `${module.doc}:${docLine}` : ''
    return `  [${setting.name}] ${where ? `${where}: ` : ''}${message}`
  })
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ptykit-consumer-types-'))
try {
  // The docs first: a sample or an excerpt that is wrong fails before the minute of packing.
  const context = contextNames(path.join(fixtureSources, 'doc-context.ts'))
  const modules = new Map()
  const skipped = []
  const excerptErrors = []
  let excerptCount = 0
  for (const doc of SAMPLE_DOCS) {
    const extracted = extractSamples(fs.readFileSync(path.join(root, doc), 'utf8'), doc)
    skipped.push(...extracted.skipped)
    for (const excerpt of extracted.excerpts) {
      excerptCount += 1
      const source = path.join(root, excerpt.source)
      if (!fs.existsSync(source)) {
        excerptErrors.push(`  ${doc}:${excerpt.line - 1}: the excerpt's source ${excerpt.source} does not exist`)
        continue
      }
      const mismatch = excerptMismatch(excerpt, fs.readFileSync(source, 'utf8'))
      if (mismatch) excerptErrors.push(`  ${doc}:${mismatch.line}: not in ${excerpt.source} (in this order): ${mismatch.text}`)
    }
    const guide = path.basename(doc, '.md').toLowerCase()
    const docContextFile = path.join(fixtureSources, `doc-context.${guide}.ts`)
    const docContext = fs.existsSync(docContextFile) ? { module: `./doc-context.${guide}.js`, names: contextNames(docContextFile), reexports: contextReexports(docContextFile) } : undefined
    extracted.samples.forEach((sample, n) => {
      const module = sampleModule(sample, context, docContext)
      // A sample that takes names from the guide's context imports what that context imports.
      const specifiers = [...module.specifiers, ...(module.contextModules.length ? moduleSpecifiers(docContextFile) : [])]
      const imports = runtimeImports(sample).map((declaration) => ({ doc: sample.doc, ...declaration }))
      modules.set(`sample-${guide}-${n + 1}.ts`, { doc: sample.doc, ...module, specifiers, runtimeImports: imports })
    })
  }
  if (modules.size === 0) throw new CheckFailure(`no \`\`\`ts fences found in ${SAMPLE_DOCS.join(', ')}`)
  if (excerptErrors.length) throw new CheckFailure(`a doc excerpt no longer matches the file it quotes:\n${excerptErrors.join('\n')}`)

  const tarball = packFreshTarball(work)
  try {
    run(path.join(root, 'node_modules', '.bin', 'attw'), [tarball, '--format', 'table-flipped'])
  } catch (error) {
    throw new CheckFailure(`attw found problems in the packed types:\n${error.stdout ?? ''}${error.stderr ?? ''}`)
  }

  const project = path.join(work, 'consumer')
  fs.mkdirSync(project)
  installTarball(project, tarball)
  // A sibling of `project`, not inside it: TypeScript looks for a package in every node_modules up the tree.
  const projectWithoutPeers = path.join(work, 'consumer-without-peers')
  extractTarballWithoutPeers(projectWithoutPeers, tarball)


  const checks = SETTINGS.map((setting) => {
    const dir = path.join(setting.withoutPeers ? projectWithoutPeers : project, setting.name)
    writeSetting(dir, setting, modules)
    return typeCheck(dir, setting, modules)
  })
  const errors = (await Promise.all(checks)).flat()
  if (errors.length) {
    throw new CheckFailure(`the packed types do not compile for a consumer:\n${errors.join('\n')}`)
  }
  // The types are not the run time: a named import of a CommonJS package whose exports Node cannot
  // detect compiles, then fails in an ES module ("does not provide an export named …"). Node loads
  // every package import of every sample as an ES module of the nodenext-esm setting would.
  const esmDir = path.join(project, 'nodenext-esm')
  fs.writeFileSync(path.join(esmDir, 'runtime-imports.mjs'), runtimeImportsProbe([...modules.values()].flatMap((module) => module.runtimeImports)))
  const unresolved = run(process.execPath, ['runtime-imports.mjs'], { cwd: esmDir }).trim()
  if (unresolved) {
    throw new CheckFailure(`a doc sample's import compiles but fails at run time in an ES module:\n${unresolved.split('\n').map((line) => `  ${line}`).join('\n')}`)
  }
  const skippedNote = skipped.length ? `; not compiled by request: ${skipped.join(', ')}` : ''
  console.log(
    `check-consumer-types: OK (prepack built dist; attw clean; installs alone; ${modules.size} doc samples, event payloads, disposables and forwarded undefined inputs ` +
      `compile strict without skipLibCheck under ${SETTINGS.filter((s) => !s.withoutPeers).map((s) => s.name).join(', ')}, and their package imports load in a Node ES module; ` +
      `ptykit/testing/fake compiles without vitest and fast-check under ${SETTINGS.filter((s) => s.withoutPeers).map((s) => s.name).join(', ')}; ` +
      `${excerptCount} doc excerpts match the files they quote${skippedNote})`,
  )
} catch (error) {
  const detail = error instanceof CheckFailure ? error.message : `${error.stderr ?? ''}${error.stdout ?? ''}${error.stack}`
  console.error(`check-consumer-types: FAILED\n${detail}`)
  process.exitCode = 1
} finally {
  if (process.env.PTYKIT_KEEP_FIXTURE) console.error(`check-consumer-types: the fixture is kept in ${work}`)
  else fs.rmSync(work, { recursive: true, force: true })
}
