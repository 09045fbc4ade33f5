#!/usr/bin/env node
// Proves that every public export of every subpath entry carries TSDoc.
// Reads the sources through the TypeScript compiler API (no build needed); exits 1 with a list of
// undocumented exports. Why a script next to typedoc's own validation: typedoc checks what it
// renders, this checks exactly what each entry exports, by name, including re-exports.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const rootFlag = process.argv.indexOf('--root')
const root =
  rootFlag >= 0 && process.argv[rootFlag + 1]
    ? path.resolve(process.argv[rootFlag + 1])
    : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const entries = ['exit-cause', 'contracts', 'spawn', 'controller', 'node-pty', 'testing', 'testing/fake', 'ssh', 'pty-host'].map((m) =>
  path.join(root, 'src', m, 'index.ts'),
)

const configPath = path.join(root, 'tsconfig.build.json')
// Without a tsconfig.build.json (a test's fixture tree): the repository's target and lib, and no
// ambient @types. TypeScript's own defaults would load lib.dom, whose parsing alone costs seconds.
const options = ts.sys.fileExists(configPath)
  ? ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, root).options
  : {
      strict: true,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts'],
      types: [],
    }
const program = ts.createProgram(
  entries.filter((entry) => ts.sys.fileExists(entry)),
  { ...options, noEmit: true },
)
const checker = program.getTypeChecker()

const missing = []
let checked = 0
for (const entry of entries) {
  const source = program.getSourceFile(entry)
  if (!source) continue // a fixture tree may hold only some entries
  const moduleSymbol = checker.getSymbolAtLocation(source)
  if (!moduleSymbol) continue // an entry that exports nothing yet
  for (const exported of checker.getExportsOfModule(moduleSymbol)) {
    const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    checked += 1
    const documented =
      target.getDocumentationComment(checker).some((part) => part.text.trim().length > 0) ||
      (target.declarations ?? []).some((decl) => ts.getJSDocCommentsAndTags(decl).length > 0)
    if (!documented) {
      const decl = target.declarations?.[0]
      const where = decl
        ? `${path.relative(root, decl.getSourceFile().fileName)}:${decl.getSourceFile().getLineAndCharacterOfPosition(decl.getStart()).line + 1}`
        : '?'
      missing.push(`${path.relative(root, entry)} exports \`${exported.getName()}\` without TSDoc (${where})`)
    }
  }
}

if (missing.length > 0) {
  console.error(`check-exports-documented: ${missing.length} public export(s) without TSDoc:`)
  for (const line of missing) console.error(`  - ${line}`)
  process.exit(1)
}
console.log(`check-exports-documented: OK (${checked} exports across ${entries.length} entries documented)`)
