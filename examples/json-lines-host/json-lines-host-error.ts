// The typed error of the JSON-lines provider (examples/custom-provider.ts).
//
// Expected failures are values or typed errors with a stable `code` — never a bare message a host
// would have to parse. Codes of the provider itself:
//
// - `host_exited`: the PTY host child is gone; every request that was pending is rejected with it;
// - `provider_disposed`: the provider was disposed (use after dispose is a programmer error);
// - `deadline_exceeded`: the host did not answer within the request's deadline;
// - `protocol_error`: the host answered something that is not a valid reply.
//
// Codes relayed from the host keep their value — above all `pty_absent`, the typed absence an
// attach-only spawn must reject with so that the spawn pipeline may retire a slot's owner.

/** The codes the JSON-lines provider raises itself. */
export type JsonLinesHostErrorCode = 'host_exited' | 'provider_disposed' | 'deadline_exceeded' | 'protocol_error'

/** A failure of the JSON-lines provider or of its host; match on `code`, never on the message. */
export class JsonLinesHostError extends Error {
  /** The stable code: one of {@link JsonLinesHostErrorCode}, or a code relayed from the host (`pty_absent`…). */
  readonly code: JsonLinesHostErrorCode | (string & {})

  /** Create the error. */
  constructor(code: JsonLinesHostErrorCode | (string & {}), message: string) {
    super(message)
    this.name = 'JsonLinesHostError'
    this.code = code
  }
}

/** True for a {@link JsonLinesHostError}. */
export function isJsonLinesHostError(error: unknown): error is JsonLinesHostError {
  return error instanceof JsonLinesHostError
}
