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
}
export declare const NOT_COMPILED_MARKER: string
export declare const NO_COMPILE_FIRST_LINE: string
export declare function extractSamples(markdown: string, doc: string): { samples: DocSample[]; skipped: string[] }
export declare function contextNames(file: string): string[]
export declare function sampleModule(sample: DocSample, context: readonly string[]): SampleModule
