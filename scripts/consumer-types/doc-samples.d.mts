// Types of doc-samples.mjs, for the tests that import it.

/** One compiled code fence of a markdown document. */
export interface DocSample {
  doc: string
  /** The markdown line of the fence's first code line. */
  line: number
  code: string
}
/** A fence as a module that compiles in a consumer project. */
export interface SampleModule {
  text: string
  /** Per line of `text`, the markdown line it came from, or null for generated lines. */
  origin: (number | null)[]
  /** The module specifiers the fence imports. */
  specifiers: string[]
  /** The guide's own context module, when the fence uses a name of it (`./doc-context.<guide>.js`). */
  contextModules: string[]
}
export declare const NOT_COMPILED_MARKER: string
export declare const NO_COMPILE_FIRST_LINE: string
/** A fence quoting a source file of the repository (`<!-- excerpt: path -->`). */
export interface DocExcerpt extends DocSample {
  /** The quoted file, relative to the repository root. */
  source: string
}
export declare const EXCERPT_MARKER: RegExp
export declare function extractSamples(markdown: string, doc: string): { samples: DocSample[]; excerpts: DocExcerpt[]; skipped: string[] }
export declare function excerptMismatch(excerpt: DocExcerpt, source: string): { line: number; text: string } | null
export declare function contextNames(file: string): string[]
export declare function contextReexports(file: string): string[]
export declare function moduleSpecifiers(file: string): string[]
export declare function sampleModule(
  sample: DocSample,
  context: readonly string[],
  docContext?: { module: string; names: readonly string[]; reexports?: readonly string[] },
): SampleModule
/** One import declaration of a fence that takes bindings from a package at run time. */
export interface RuntimeImport {
  /** The markdown line of the declaration. */
  line: number
  specifier: string
  /** The imported names (not `type`-only), as the package exports them. */
  names: string[]
  default: boolean
  namespace: boolean
}
export declare function runtimeImports(sample: DocSample): RuntimeImport[]
export declare function runtimeImportsProbe(imports: readonly (RuntimeImport & { doc: string })[]): string
