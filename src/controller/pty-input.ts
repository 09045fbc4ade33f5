import {
  refusedWrite,
  settlementFromProviderWrite,
  unverifiableWrite,
  type PtyIncarnationId,
  type PtySize,
  type WriteSettlement,
} from '../contracts/index.js'
import { isPromiseLike } from '../contracts/promise-like.js'
import { refusedOptionOf } from '../spawn/provider-option-refusal.js'
import { providerGoneRefusal, reportProviderGone, reportProviderThrow, type ControllerCore } from './controller-core.js'

/**
 * Input to a tracked PTY and its size: writes settled in three values (accepted, refused,
 * unverifiable), resize, and the size read back. The facade has checked the arguments.
 */
export class PtyInput {
  readonly #core: ControllerCore

  constructor(core: ControllerCore) {
    this.#core = core
  }

  /**
   * Write `data`; see `PtyController.writeWithSettlement`. A string goes to the provider's
   * `write`, bytes to its `writeBytes` — never to `write`, which a provider written before bytes
   * could be written takes as text — and are refused `provider_cannot_write_bytes` by a provider
   * without it, nothing written.
   */
  write(ptyId: string, data: string | Uint8Array, expected: PtyIncarnationId | undefined): WriteSettlement | Promise<WriteSettlement> {
    const core = this.#core
    if (core.disposed()) return refusedWrite('controller_disposed')
    const record = core.records.get(ptyId)
    if (record === undefined) return refusedWrite('pty_not_found')
    if (expected !== undefined && expected !== record.incarnationId) return refusedWrite('stale_incarnation')
    if (record.state !== 'live') return refusedWrite('pty_exited')
    const provider = record.provider
    let settlement: unknown
    let method: 'write' | 'writeBytes' = 'write'
    try {
      if (typeof data === 'string') settlement = provider.write(ptyId, data)
      else {
        method = 'writeBytes'
        if (typeof provider.writeBytes !== 'function') return refusedWrite('provider_cannot_write_bytes')
        settlement = provider.writeBytes(ptyId, data)
      }
    } catch (error) {
      reportProviderThrow(core, provider, method, error, ptyId)
      // A disposed (or detached) provider's refusal (the rule of `PtyProvider.dispose`): thrown before any I/O.
      if (providerGoneRefusal(error) !== null) return refusedWrite('provider_refused_write')
      return unverifiableWrite('provider_threw_after_handoff', true)
    }
    if (isPromiseLike(settlement)) {
      return Promise.resolve(settlement).then(settlementFromProviderWrite, (error: unknown) => {
        if (reportProviderGone(core, provider, 'provider_threw', error) === null) core.report('provider_threw', `Provider ${record.provider.name} rejected a write settlement`, error, ptyId)
        return unverifiableWrite('provider_threw_after_handoff', true)
      })
    }
    return settlementFromProviderWrite(settlement)
  }

  /**
   * Resize a live PTY; `false` when it is unknown, not live, or the provider refused or threw.
   *
   * @throws the provider's refusal of the size itself (a limit of its own, such as the pty host's
   * screen cells: an error with `code: 'invalid_option'` naming `cols` or `rows` and the value),
   * as the caller's error — not reported as a provider failure.
   */
  resize(ptyId: string, cols: number, rows: number): boolean {
    const record = this.#core.records.get(ptyId)
    if (record === undefined || record.state !== 'live') return false
    try {
      const applied = record.provider.resize(ptyId, cols, rows)
      if (applied) record.size = { cols, rows }
      return applied
    } catch (error) {
      // A provider's refusal of the size itself is the caller's error, not the provider's failure.
      const refused = refusedOptionOf(error, 'invalid_option')?.option
      if (refused === 'cols' || refused === 'rows') throw error
      reportProviderThrow(this.#core, record.provider, 'resize', error, ptyId)
      return false
    }
  }

  /** The size the provider reads back, else the size last applied; `null` for unknown or ended PTYs. */
  getSize(ptyId: string): PtySize | null {
    const record = this.#core.records.get(ptyId)
    if (record === undefined || record.state !== 'live') return null
    try {
      const readBack = record.provider.getSize?.(ptyId)
      if (readBack !== undefined && readBack !== null) return { cols: readBack.cols, rows: readBack.rows }
    } catch (error) {
      reportProviderThrow(this.#core, record.provider, 'getSize', error, ptyId)
    }
    return { ...record.size }
  }
}
