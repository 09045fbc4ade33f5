import { defineErrorBrand } from '../contracts/error-brand.js'
import type { PtyIncarnationId } from '../contracts/index.js'
import { PTY_EXITED_DURING_START_ERROR_CODE } from './types.js'

/** The error the in-memory runtime's admission gate throws for a PTY that exited while pending. */
export class PtyExitedDuringStartError extends Error {
  /** {@link PTY_EXITED_DURING_START_ERROR_CODE}: the pipeline reports it as `exited_during_start`. */
  readonly code = PTY_EXITED_DURING_START_ERROR_CODE
  /** The PTY that exited. */
  readonly ptyId: string

  /** Create the error for `ptyId`. */
  constructor(ptyId: string, incarnationId: PtyIncarnationId | null) {
    super(
      `PTY ${JSON.stringify(ptyId)}${incarnationId === null ? '' : ` (incarnation ${JSON.stringify(incarnationId)})`} exited while its registration was pending`,
    )
    this.ptyId = ptyId
    PTY_EXITED_DURING_START_ERROR_BRAND.mark(this)
  }
}
const PTY_EXITED_DURING_START_ERROR_BRAND = defineErrorBrand(PtyExitedDuringStartError, 'PtyExitedDuringStartError')
