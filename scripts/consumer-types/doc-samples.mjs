// The code samples of a markdown document, as TypeScript modules a consumer project can compile.
// Used by check-consumer-types.mjs; the rules for authors are in its header.
import fs from 'node:fs'
import ts from 'typescript'

/** A line right before a fence that keeps it out of the check. */
export const NOT_COMPILED_MARKER = '<!-- not-compiled -->'
/** A fence's first line that keeps it out of the check. */
export const NO_COMPILE_FIRST_LINE = '// @noCompile'

/**
 * The ```ts / ```typescript fences of a markdown text: `samples` (`{ doc, line, code }`, line of the
 * first code line) and `skipped` (`doc:line` of each fence that opted out).
 */
export function extractSamples(markdown, doc) {
  const lines = markdown.split('\n')
  const samples = []
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
    if (['ts', 'typescript'].includes(info.toLowerCase())) {
      if (optedOut) skipped.push(`${doc}:${i + 1}`)
      else samples.push({ doc, line: i + 2, code: code.join('\n') })
    }
    i = end
  }
  return { samples, skipped }
}

/** Names the reader's context provides: the exports of `file` (doc-context.ts). */
export function contextNames(file) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest)
  const names = []
  for (const statement of source.statements) {
    const exported = ts.getModifiers?.(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    if (!exported) continue
    if (ts.isVariableStatement(statement)) names.push(...statement.declarationList.declarations.map((d) => d.name.getText(source)))
    else if (statement.name) names.push(statement.name.getText(source))
  }
  return names
}

/**
 * A fence as a module: its imports at the top, the context names it does not import, and the rest
 * inside `async function`. Returns the text and, per generated line, the markdown line (or null).
 */
export function sampleModule(sample, context) {
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
  const fromContext = context.filter((name) => !imported.has(name))
  if (fromContext.length) emit(`import { ${fromContext.join(', ')} } from './doc-context.js'`)
  emit('export async function sample(): Promise<void> {')
  codeLines.forEach((text, l) => importLines.has(l) || emit(text, sample.line + l))
  emit('}')
  return { text: `${out.join('\n')}\n`, origin, specifiers }
}
