#!/usr/bin/env node
// check-layering: proves the module map of docs/architecture.md ("The layering rule") from the sources.
//
// Reads every TypeScript file under src/<module>/ (and src/*.ts), collects every module specifier
// it names — `import … from`, `export … from`, side-effect `import '…'`, `import type`, dynamic
// `import('…')` (also in type positions), `require('…')`, `/// <reference types|path>` — and checks
// each one against the layering rule:
//
//   exit-cause < contracts < spawn < controller < { node-pty, testing, ssh } < pty-host
//
// A module may import only lower modules (and itself), as its entry in RULES lists them (ssh builds
// on contracts alone). Only the provider modules touch native or test-only packages, each through a
// short allow-list: node-pty node-pty, testing fast-check and vitest, ssh ssh2, pty-host the
// headless xterm packages. Type-only imports count: a type import
// still ties the published declarations to the imported package.
//
// Usage: node scripts/check-layering.mjs [--root <dir>]   (default root: the repo, ../ of scripts/)
// Exit 0 with a one-line summary when the tree obeys the rule; exit 1 listing every violation.

import { builtinModules } from 'node:module'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

// ------------------------------------------------------------------------------------------------
// The rule
// ------------------------------------------------------------------------------------------------

/** The entry `src/index.ts` (and any other file directly in src/): not a module folder. */
const ROOT_ENTRY = '(index)'

/**
 * For each module: the modules it may import (itself included) and the external specifiers it may
 * import. `external` entries are exact specifiers (`node:events`), package names (`typed-emitter`),
 * or `node:*` for every node builtin.
 */
const RULES = {
  'exit-cause': { modules: ['exit-cause'], external: [] },
  contracts: { modules: ['exit-cause', 'contracts'], external: [] },
  spawn: { modules: ['exit-cause', 'contracts', 'spawn'], external: [] },
  controller: {
    modules: ['exit-cause', 'contracts', 'spawn', 'controller'],
    external: ['node:events', 'typed-emitter'],
  },
  'node-pty': {
    modules: ['exit-cause', 'contracts', 'spawn', 'controller', 'node-pty', ROOT_ENTRY],
    external: ['node:*', 'node-pty', 'typed-emitter'],
  },
  testing: {
    modules: ['exit-cause', 'contracts', 'spawn', 'controller', 'testing', ROOT_ENTRY],
    external: ['fast-check', 'vitest', 'typed-emitter', 'node:events', 'node:timers', 'node:timers/promises'],
  },
  // ptykit/ssh: PTYs over SSH through ssh2 (an optional peer, loaded lazily).
  ssh: {
    modules: ['exit-cause', 'contracts', 'ssh'],
    external: ['node:*', 'ssh2'],
  },
  // The pty host runs node-pty through the node-pty provider, and feeds a headless xterm.
  'pty-host': {
    modules: ['exit-cause', 'contracts', 'node-pty', 'pty-host'],
    external: ['node:*', '@xterm/headless', '@xterm/addon-serialize'],
  },
  [ROOT_ENTRY]: { modules: ['exit-cause', 'contracts', 'spawn', 'controller', ROOT_ENTRY], external: [] },
}
const MODULES = Object.keys(RULES).filter((name) => name !== ROOT_ENTRY)
/** Layer numbers, for telling "a higher module" from "a sibling". */
const LAYER = { 'exit-cause': 0, contracts: 1, spawn: 2, controller: 3, [ROOT_ENTRY]: 4, 'node-pty': 5, testing: 5, ssh: 5, 'pty-host': 6 }
/** The rule in one line, and where it is explained: every message of this script names both. */
const LAYERING_RULE = 'exit-cause < contracts < spawn < controller < {node-pty, testing, ssh} < pty-host'
const LAYERING_DOC = 'docs/architecture.md#the-layering-rule'
/** This package's own name: `ptykit` and `ptykit/<module>` are imports of a module, not a package. */
const SELF = 'ptykit'

const BUILTINS = new Set(builtinModules.filter((name) => !name.startsWith('_')))

// ------------------------------------------------------------------------------------------------
// Arguments
// ------------------------------------------------------------------------------------------------

function parseArgs(argv) {
  let root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--root' && argv[i + 1] !== undefined) root = path.resolve(argv[++i])
    else if (arg.startsWith('--root=')) root = path.resolve(arg.slice('--root='.length))
    else if (arg === '--help' || arg === '-h') {
      console.log('usage: node scripts/check-layering.mjs [--root <dir>]')
      process.exit(0)
    } else {
      console.error(`check-layering: unknown argument ${JSON.stringify(arg)}`)
      console.error('usage: node scripts/check-layering.mjs [--root <dir>]')
      process.exit(2)
    }
  }
  return { root }
}

// ------------------------------------------------------------------------------------------------
// Reading specifiers: a small lexer, so that comments, strings and regexes never fake an import
// ------------------------------------------------------------------------------------------------

const KEYWORDS_BEFORE_EXPRESSION = new Set([
  'return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do',
  'else', 'yield', 'await', 'extends', 'keyof', 'satisfies', 'as',
])
const ID_START = /[\p{ID_Start}$_]/u
const ID_PART = /[\p{ID_Continue}$\u200c\u200d]/u

/**
 * Tokens: { type: 'id' | 'str' | 'tpl' | 'num' | 'punct' | 'regex', value, line }. A template
 * literal with no substitution is a 'str'; one with substitutions is a 'tpl' (not analysable).
 * `/// <reference …/>` directives are returned separately.
 */
function tokenize(source) {
  const tokens = []
  const references = []
  const braces = [] // 'brace' | 'tpl', to resume a template literal at its closing `}`
  let i = 0
  let line = 1
  const n = source.length
  const push = (type, value, atLine) => tokens.push({ type, value, line: atLine })
  const prev = () => tokens[tokens.length - 1]

  const regexAllowed = () => {
    const p = prev()
    if (p === undefined) return true
    if (p.type === 'punct') return ![')', ']', '}'].includes(p.value)
    if (p.type === 'id') return KEYWORDS_BEFORE_EXPRESSION.has(p.value)
    return false
  }

  // Reads a template literal body from i (just after ` or }) up to ` or ${.
  const readTemplate = (startLine, startedWithBacktick) => {
    let text = ''
    while (i < n) {
      const c = source[i]
      if (c === '\\') {
        text += source.slice(i, i + 2)
        if (source[i + 1] === '\n') line++
        i += 2
        continue
      }
      if (c === '`') {
        i++
        push(startedWithBacktick ? 'str' : 'tpl', text, startLine)
        return
      }
      if (c === '$' && source[i + 1] === '{') {
        i += 2
        braces.push('tpl')
        push('tpl', text, startLine)
        return
      }
      if (c === '\n') line++
      text += c
      i++
    }
    push('tpl', text, startLine) // unterminated: keep going, best effort
  }

  while (i < n) {
    const c = source[i]
    if (c === '\n') {
      line++
      i++
      continue
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v' || c === '\ufeff' || c === '\u00a0') {
      i++
      continue
    }
    if (c === '/' && source[i + 1] === '/') {
      const end = source.indexOf('\n', i)
      const text = source.slice(i, end === -1 ? n : end)
      const reference = /^\/\/\/\s*<reference\s+(types|path)\s*=\s*(['"])([^'"]+)\2/.exec(text)
      if (reference) references.push({ kind: reference[1], spec: reference[3], line })
      i = end === -1 ? n : end
      continue
    }
    if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2)
      const stop = end === -1 ? n : end + 2
      for (let k = i; k < stop; k++) if (source[k] === '\n') line++
      i = stop
      continue
    }
    if (c === '"' || c === "'") {
      const startLine = line
      let text = ''
      i++
      while (i < n && source[i] !== c && source[i] !== '\n') {
        if (source[i] === '\\') {
          if (source[i + 1] === '\n') line++
          text += source[i + 1] ?? ''
          i += 2
          continue
        }
        text += source[i]
        i++
      }
      i++
      push('str', text, startLine)
      continue
    }
    if (c === '`') {
      i++
      readTemplate(line, true)
      continue
    }
    if (c === '{') {
      braces.push('brace')
      push('punct', c, line)
      i++
      continue
    }
    if (c === '}') {
      const opener = braces.pop()
      i++
      if (opener === 'tpl') readTemplate(line, false)
      else push('punct', c, line)
      continue
    }
    if (c === '/' && regexAllowed()) {
      const startLine = line
      let inClass = false
      let j = i + 1
      while (j < n && source[j] !== '\n') {
        const d = source[j]
        if (d === '\\') {
          j += 2
          continue
        }
        if (d === '[') inClass = true
        else if (d === ']') inClass = false
        else if (d === '/' && !inClass) break
        j++
      }
      j++
      while (j < n && /[a-z]/i.test(source[j])) j++
      push('regex', source.slice(i, j), startLine)
      i = j
      continue
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(source[i + 1] ?? ''))) {
      let j = i + 1
      while (j < n && /[0-9a-zA-Z_.]/.test(source[j])) j++
      push('num', source.slice(i, j), line)
      i = j
      continue
    }
    if (ID_START.test(c)) {
      let j = i + 1
      while (j < n && ID_PART.test(source[j])) j++
      push('id', source.slice(i, j), line)
      i = j
      continue
    }
    push('punct', c, line)
    i++
  }
  return { tokens, references }
}

/**
 * Every module specifier a file names, with its line and how it was written. A dynamic import or
 * require whose argument is not a plain string literal is returned with `spec: null`: it cannot be
 * proven to obey the rule, so it is reported.
 */
function collectSpecifiers(source) {
  const { tokens, references } = tokenize(source)
  const found = []
  const isMemberAccess = (index) => {
    const before = tokens[index - 1]
    return before !== undefined && before.type === 'punct' && before.value === '.'
  }
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]
    if (t.type !== 'id') continue
    const next = tokens[k + 1]
    if (next === undefined) break
    // `import … from '…'` / `export … from '…'`: `from` followed by a string only occurs there.
    if (t.value === 'from' && next.type === 'str' && !isMemberAccess(k)) {
      found.push({ spec: next.value, line: next.line, how: 'from' })
      continue
    }
    if (t.value === 'import' && !isMemberAccess(k)) {
      if (next.type === 'str') {
        found.push({ spec: next.value, line: next.line, how: 'side-effect import' })
      } else if (next.type === 'punct' && next.value === '(') {
        const arg = tokens[k + 2]
        const after = tokens[k + 3]
        const literal = arg !== undefined && arg.type === 'str'
        const closes = after !== undefined && after.type === 'punct' && (after.value === ')' || after.value === ',')
        found.push({ spec: literal && closes ? arg.value : null, line: t.line, how: 'import()' })
      }
      continue
    }
    if (t.value === 'require' && !isMemberAccess(k) && next.type === 'punct' && next.value === '(') {
      const arg = tokens[k + 2]
      const after = tokens[k + 3]
      const literal = arg !== undefined && arg.type === 'str'
      const closes = after !== undefined && after.type === 'punct' && after.value === ')'
      found.push({ spec: literal && closes ? arg.value : null, line: t.line, how: 'require()' })
    }
  }
  for (const reference of references) {
    found.push({
      spec: reference.kind === 'path' && !reference.spec.startsWith('.') ? `./${reference.spec}` : reference.spec,
      line: reference.line,
      how: `/// <reference ${reference.kind}>`,
    })
  }
  return found.sort((a, b) => a.line - b.line)
}

// ------------------------------------------------------------------------------------------------
// Classifying a specifier
// ------------------------------------------------------------------------------------------------

function isDirectory(candidate) {
  try {
    return statSync(candidate).isDirectory()
  } catch {
    return false
  }
}

/** The package a bare specifier names: `@scope/name` or `name`, without any subpath. */
function packageName(spec) {
  const parts = spec.split('/')
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? spec)
}

/**
 * What a specifier points at:
 * - { type: 'module', module }        a module of this package (relative, or `ptykit[/x]`);
 * - { type: 'outside', resolved }     a relative path that leaves src/;
 * - { type: 'builtin', name }         a node builtin, normalized to `node:x`;
 * - { type: 'package', name }         any other bare specifier.
 */
function classify(spec, fromFile, srcDir) {
  if (spec.startsWith('.') || spec.startsWith('/')) {
    const resolved = path.resolve(path.dirname(fromFile), spec)
    const rel = path.relative(srcDir, resolved)
    if (rel === '') return { type: 'module', module: ROOT_ENTRY } // `..` from a module: src/index
    if (rel.startsWith('..') || path.isAbsolute(rel)) return { type: 'outside', resolved }
    const [first = '', ...rest] = rel.split(path.sep)
    // `../spawn` names the folder (its index); `../index.js` names a file directly in src/.
    if (rest.length === 0 && !isDirectory(path.join(srcDir, first))) return { type: 'module', module: ROOT_ENTRY }
    return { type: 'module', module: first }
  }
  if (spec.startsWith('node:')) return { type: 'builtin', name: spec }
  if (BUILTINS.has(spec) || BUILTINS.has(packageName(spec))) return { type: 'builtin', name: `node:${spec}` }
  if (spec === SELF) return { type: 'module', module: ROOT_ENTRY }
  if (spec.startsWith(`${SELF}/`)) {
    const sub = spec.slice(SELF.length + 1).split('/')[0]
    return { type: 'module', module: sub }
  }
  return { type: 'package', name: packageName(spec) }
}

function externalAllowed(rule, target) {
  const allowed = rule.external
  if (target.type === 'builtin') return allowed.includes('node:*') || allowed.includes(target.name)
  return allowed.includes(target.name)
}

function describeAllowed(owner) {
  const rule = RULES[owner]
  const modules = rule.modules.filter((name) => name !== owner)
  const parts = [...modules, ...rule.external]
  return parts.length === 0 ? 'nothing outside itself' : parts.join(', ')
}

/** The broken rule, or null when the import is allowed. */
function check(owner, spec, fromFile, srcDir) {
  if (spec === null) {
    return 'a non-literal import()/require() cannot be checked; use a string literal'
  }
  const target = classify(spec, fromFile, srcDir)
  const rule = RULES[owner]
  const label = owner === ROOT_ENTRY ? 'src/index.ts' : owner
  if (owner === 'exit-cause') {
    if (target.type === 'module' && target.module === 'exit-cause') return null
    return 'exit-cause imports nothing outside src/exit-cause'
  }
  switch (target.type) {
    case 'outside':
      return `${label} reaches outside src/ (${path.relative(path.dirname(srcDir), target.resolved) || '.'})`
    case 'module': {
      if (!(target.module in RULES)) return `${label} imports src/${target.module}, which is not a module of the module map (${LAYERING_DOC})`
      if (rule.modules.includes(target.module)) return null
      const targetLabel = target.module === ROOT_ENTRY ? 'src/index.ts' : target.module
      const how =
        LAYER[target.module] > LAYER[owner]
          ? 'a higher module'
          : LAYER[target.module] === LAYER[owner]
            ? 'a sibling module'
            : 'a module it may not import'
      return `${label} may not import ${targetLabel} (${how}); ${label} may import: ${describeAllowed(owner)}`
    }
    case 'builtin':
    case 'package': {
      if (externalAllowed(rule, target)) return null
      const what = target.type === 'builtin' ? `the node builtin ${target.name}` : `the package ${target.name}`
      if (LAYER[owner] <= LAYER.spawn) {
        return `${label} is platform-free: no node builtins and no packages (found ${what})`
      }
      return `${label} may not import ${what}; ${label} may import: ${describeAllowed(owner)}`
    }
  }
  return null
}

// ------------------------------------------------------------------------------------------------
// Walking the tree
// ------------------------------------------------------------------------------------------------

const SOURCE_FILE = /\.(?:[cm]?ts|tsx)$/

function listSources(dir) {
  const out = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name === 'node_modules') continue
      out.push(...listSources(full))
    } else if (entry.isFile() && SOURCE_FILE.test(entry.name)) {
      out.push(full)
    }
  }
  return out.sort()
}

function main() {
  const { root } = parseArgs(process.argv.slice(2))
  const srcDir = path.join(root, 'src')
  if (!isDirectory(srcDir)) {
    console.error(`check-layering: no src/ directory under ${root}`)
    process.exit(1)
  }

  const violations = []
  const modulesSeen = new Set()
  let filesScanned = 0
  let specifiersChecked = 0

  for (const entry of readdirSync(srcDir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = path.join(srcDir, entry.name)
    let owner
    let files
    if (entry.isDirectory()) {
      owner = entry.name
      files = listSources(full)
      if (!(owner in RULES)) {
        if (files.length > 0) {
          violations.push({
            file: path.relative(root, full),
            line: 0,
            spec: '',
            rule: `src/${owner} is not a module of the module map (${MODULES.join(', ')}); its layer is unknown — add it to RULES and to ${LAYERING_DOC}`,
          })
        }
        continue
      }
    } else if (entry.isFile() && SOURCE_FILE.test(entry.name)) {
      owner = ROOT_ENTRY
      files = [full]
    } else {
      continue
    }
    if (files.length > 0) modulesSeen.add(owner)
    for (const file of files) {
      filesScanned++
      const source = readFileSync(file, 'utf8')
      for (const { spec, line, how } of collectSpecifiers(source)) {
        specifiersChecked++
        const broken = check(owner, spec, file, srcDir)
        if (broken !== null) {
          violations.push({ file: path.relative(root, file), line, spec: spec ?? `<non-literal ${how}>`, rule: broken })
        }
      }
    }
  }

  if (violations.length > 0) {
    console.error(`check-layering: ${violations.length} violation(s) of the module layering ${LAYERING_RULE} (see ${LAYERING_DOC}):`)
    for (const v of violations) {
      const where = v.line > 0 ? `${v.file.split(path.sep).join('/')}:${v.line}` : v.file.split(path.sep).join('/')
      console.error(`  ${where}  ${v.spec === '' ? '' : `'${v.spec}'  `}— ${v.rule}`)
    }
    process.exit(1)
  }

  const modules = [...modulesSeen]
    .sort((a, b) => LAYER[a] - LAYER[b] || a.localeCompare(b))
    .map((name) => (name === ROOT_ENTRY ? 'src/index.ts' : name))
  console.log(
    `check-layering: OK — ${filesScanned} file(s), ${specifiersChecked} import specifier(s) in ${modules.length} module(s) (${modules.join(', ')}) obey ${LAYERING_RULE} (see ${LAYERING_DOC})`,
  )
}

main()
