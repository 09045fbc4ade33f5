// The code samples of a markdown document, as TypeScript modules a consumer project can compile.
// Used by check-consumer-types.mjs; the rules for authors are in its header.
import fs from 'node:fs'
import ts from 'typescript'

/** A line right before a fence that keeps it out of the check. */
export const NOT_COMPILED_MARKER = '<!-- not-compiled -->'
/** A fence's first line that keeps it out of the check. */
export const NO_COMPILE_FIRST_LINE = '// @noCompile'
/**
 * A line right before a fence quoting a source file of this repository (`<!-- excerpt:
 * examples/custom-provider.ts -->`), which that file's own compile checks: the fence is not compiled
 * on its own, and each of its code lines must be found in that file, in order (see {@link excerptMismatch}).
 */
export const EXCERPT_MARKER = /^<!--\s*excerpt:\s*(\S+)\s*-->$/

/**
 * The ```ts / ```typescript fences of a markdown text: `samples` (`{ doc, line, code }`, line of the
 * first code line), `excerpts` (the same, with the `source` file they quote) and `skipped`
 * (`doc:line` of each fence that opted out).
 */
export function extractSamples(markdown, doc) {
  const lines = markdown.split('\n')
  const samples = []
  const excerpts = []
  const skipped = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*(\S*)/.exec(lines[i])
    if (!open) continue
    const [, indent, fence, info] = open
    let end = i + 1
    while (end < lines.length && !(lines[end].trim().startsWith(fence) && lines[end].trim().replace(/[`~]/g, '') === '')) end++
    const code = lines.slice(i + 1, end).map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
    let before = i - 1
    while (before >= 0 && lines[before].trim() === '') before--
    const optedOut = lines[before]?.trim() === NOT_COMPILED_MARKER || code[0]?.trim() === NO_COMPILE_FIRST_LINE
    const excerptOf = EXCERPT_MARKER.exec(lines[before]?.trim() ?? '')?.[1]
    if (['ts', 'typescript'].includes(info.toLowerCase())) {
      if (optedOut) skipped.push(`${doc}:${i + 1}`)
      else if (excerptOf !== undefined) excerpts.push({ doc, line: i + 2, code: code.join('\n'), source: excerptOf })
      else samples.push({ doc, line: i + 2, code: code.join('\n') })
    }
    i = end
  }
  return { samples, excerpts, skipped }
}

/** A line as an excerpt compares it: trimmed, without a trailing `// comment`; '' for a blank or comment-only line. */
function comparable(line) {
  const trimmed = line.trim()
  if (trimmed.startsWith('//')) return ''
  return trimmed.replace(/\s+\/\/ .*$/, '').trim()
}

/**
 * Where an excerpt departs from the source text it quotes: `null` when each of its code lines is
 * a line of `source`, in order (an excerpt may leave lines out, and comments are not compared), else
 * `{ line, text }`, the excerpt's first line (markdown line number) that is not found.
 */
export function excerptMismatch(excerpt, source) {
  const sourceLines = source.split('\n').map(comparable)
  let at = 0
  const lines = excerpt.code.split('\n')
  for (let l = 0; l < lines.length; l++) {
    const wanted = comparable(lines[l])
    if (wanted === '') continue
    const found = sourceLines.indexOf(wanted, at)
    if (found === -1) return { line: excerpt.line + l, text: lines[l].trim() }
    at = found + 1
  }
  return null
}

/** Names the reader's context provides: the exports of `file` (doc-context.ts, or a guide's own). */
export function contextNames(file) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
  const names = []
  for (const statement of source.statements) {
    const exported = ts.getModifiers?.(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    if (!exported) continue
    if (ts.isVariableStatement(statement)) names.push(...statement.declarationList.declarations.map((d) => d.name.getText(source)))
    else if (statement.name) names.push(statement.name.getText(source))
  }
  return [...names, ...contextReexports(file)]
}

/** The names `file` re-exports (`export { createPtyController } from 'ptykit/controller'`): library names. */
export function contextReexports(file) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
  return source.statements
    .filter((statement) => ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause))
    .flatMap((statement) => statement.exportClause.elements.map((element) => element.name.text))
}

/** The modules `file` imports or re-exports from (a context module's, for the settings that skip some). */
export function moduleSpecifiers(file) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
  return source.statements
    .filter((statement) => (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier)
    .map((statement) => statement.moduleSpecifier.text)
}

/**
 * A fence as a module: its imports at the top, the context names it does not import, and the rest
 * inside `async function`. `context` is the names of `./doc-context.js`; `docContext`, when given,
 * is a guide's own context module (`{ module, names, reexports? }`, e.g.
 * `./doc-context.controller.js`), whose names win over the shared ones; the library names it
 * re-exports are offered only to a fence without imports (a continuation of an earlier one). Returns the text, per generated line the markdown line (or
 * null), the specifiers the fence imports and the context modules the module imports.
 */
export function sampleModule(sample, context, docContext) {
  const source = ts.createSourceFile('sample.ts', sample.code, ts.ScriptTarget.Latest, true)
  const importLines = new Set()
  const imported = new Set()
  const specifiers = []
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement)) continue
    specifiers.push(statement.moduleSpecifier.text)
    const first = source.getLineAndCharacterOfPosition(statement.getStart(source)).line
    const last = source.getLineAndCharacterOfPosition(statement.getEnd()).line
    for (let l = first; l <= last; l++) importLines.add(l)
    const clause = statement.importClause
    if (clause?.name) imported.add(clause.name.text)
    if (clause?.namedBindings && ts.isNamedImports(clause.namedBindings)) {
      for (const element of clause.namedBindings.elements) imported.add(element.name.text)
    } else if (clause?.namedBindings) imported.add(clause.namedBindings.name.text)
  }
  const codeLines = sample.code.split('\n')
  const out = []
  const origin = []
  const emit = (text, line = null) => {
    out.push(text)
    origin.push(line)
  }
  emit(`// ${sample.doc}:${sample.line}`)
  codeLines.forEach((text, l) => importLines.has(l) && emit(text, sample.line + l))
  const contextModules = []
  // A fence with imports of its own is a whole file a reader copies: it imports the library's names
  // itself. Only a continuation (no imports) gets those the guide's context re-exports.
  const libraryNames = specifiers.length ? new Set(docContext?.reexports ?? []) : new Set()
  const fromDocContext = (docContext?.names ?? []).filter((name) => !imported.has(name) && !libraryNames.has(name))
  if (fromDocContext.length) {
    emit(`import { ${fromDocContext.join(', ')} } from '${docContext.module}'`)
    contextModules.push(docContext.module)
  }
  const fromContext = context.filter((name) => !imported.has(name) && !fromDocContext.includes(name))
  if (fromContext.length) emit(`import { ${fromContext.join(', ')} } from './doc-context.js'`)
  emit('export async function sample(): Promise<void> {')
  codeLines.forEach((text, l) => importLines.has(l) || emit(text, sample.line + l))
  emit('}')
  return { text: `${out.join('\n')}\n`, origin, specifiers, contextModules }
}

/**
 * The bindings a fence's imports take from packages at run time: per import declaration that is
 * not `import type` and names a package (not `./…` nor `node:…`), `{ line, specifier, names,
 * default, namespace }` — `names` the imported names that are not `type`-only, `default` whether it
 * takes the default export, `namespace` whether it is `* as`. `line` is the markdown line. A
 * declaration left with no value binding (`import { type T } from 'x'`) is left out.
 */
export function runtimeImports(sample) {
  const source = ts.createSourceFile('sample.ts', sample.code, ts.ScriptTarget.Latest, true)
  const imports = []
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement)) continue
    const specifier = statement.moduleSpecifier.text
    const clause = statement.importClause
    if (!clause || clause.isTypeOnly || specifier.startsWith('.') || specifier.startsWith('node:')) continue
    const bindings = clause.namedBindings
    const names = bindings && ts.isNamedImports(bindings) ? bindings.elements.filter((e) => !e.isTypeOnly).map((e) => (e.propertyName ?? e.name).text) : []
    const namespace = bindings !== undefined && ts.isNamespaceImport(bindings)
    if (!names.length && !clause.name && !namespace) continue
    const line = sample.line + source.getLineAndCharacterOfPosition(statement.getStart(source)).line
    imports.push({ line, specifier, names, default: clause.name !== undefined, namespace })
  }
  return imports
}

/**
 * A Node ES module that loads every import of `imports` (`runtimeImports` of many samples, each
 * with its `doc`) as Node loads it from an ES module, and prints one line per binding Node cannot
 * give (`doc:line: 'x' has no export named 'y' at run time`), nothing when all resolve: what a
 * reader who runs a sample in an ES module meets — a name the types declare that Node does not
 * see (a CommonJS package whose exports it cannot detect) compiles, then fails at run time.
 */
export function runtimeImportsProbe(imports) {
  return `const imports = ${JSON.stringify(imports)}
for (const { doc, line, specifier, names, default: takesDefault } of imports) {
  let namespace
  try {
    namespace = await import(specifier)
  } catch (error) {
    console.log(\`\${doc}:\${line}: '\${specifier}' cannot be imported: \${error.message.split('\\n')[0]}\`)
    continue
  }
  for (const name of [...names, ...(takesDefault ? ['default'] : [])]) {
    if (!(name in namespace)) console.log(\`\${doc}:\${line}: '\${specifier}' has no export named '\${name}' at run time (an ES module sees \${Object.keys(namespace).join(', ') || 'none'})\`)
  }
}
`
}
