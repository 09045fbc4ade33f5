import { defineErrorBrand } from '../contracts/error-brand.js'

/** Why a frame stream was refused: the connection that sent it is closed. */
export class PtyHostFrameError extends Error {
  /** `oversized`: a header announced more than the limit; `malformed`: the body is not a JSON object. */
  readonly reason: 'oversized' | 'malformed'

  /** Create the error. */
  constructor(reason: 'oversized' | 'malformed', message: string) {
    super(message)
    this.reason = reason
    PTY_HOST_FRAME_ERROR_BRAND.mark(this)
  }
}
const PTY_HOST_FRAME_ERROR_BRAND = defineErrorBrand(PtyHostFrameError, 'PtyHostFrameError')
