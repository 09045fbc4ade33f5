import type {
  ExecutionHostId,
  PtyCwdOptions,
  PtyProcessInspection,
  PtyProvider,
  PtyProviderBufferSnapshot,
} from '../contracts/index.js'
import { reportProviderThrow, type ControllerCore } from './controller-core.js'
import { providerVouchesFor } from './provider-queries.js'
import type { PtyInspectOptions } from './controller-types.js'
import { confirmForegroundOf, providerSupportsForegroundEvidence } from './foreground-evidence.js'
import { definedFields } from '../contracts/defined-fields.js'
import { INPUT_MODE_RESET_SEQUENCE } from './input-mode-reset.js'
import { incarnationOf } from '../contracts/incarnation.js'
import type { PtyRecord } from './pty-record.js'

/**
 * Questions to the provider of a live PTY — working directory, foreground process, children,
 * buffer, foreground evidence, input-mode resets — each answered `null` (or nothing) for an
 * unknown or ended PTY (the buffer: see {@link LivePtyQuestions.providerBuffer}), a missing
 * capability, or a provider failure (reported `provider_threw`).
 */
export class LivePtyQuestions {
  readonly #core: ControllerCore

  constructor(core: ControllerCore) {
    this.#core = core
  }

  /** See `PtyController.getCwd`: an empty or non-string answer is `null`. */
  async cwd(ptyId: string, options: PtyCwdOptions | undefined): Promise<string | null> {
    const cwd = await this.#askLive(ptyId, 'getCwd', (provider) =>
      options === undefined ? provider.getCwd?.(ptyId) : provider.getCwd?.(ptyId, options),
    )
    return typeof cwd === 'string' && cwd.length > 0 ? cwd : null
  }

  /** See `PtyController.getForegroundProcess`. */
  async foregroundProcess(ptyId: string): Promise<string | null> {
    const name = await this.#askLive(ptyId, 'getForegroundProcess', (provider) => provider.getForegroundProcess?.(ptyId))
    return typeof name === 'string' ? name : null
  }

  /** See `PtyController.hasChildProcesses`. */
  async hasChildProcesses(ptyId: string): Promise<boolean | null> {
    const answer = await this.#askLive(ptyId, 'hasChildProcesses', (provider) => provider.hasChildProcesses?.(ptyId))
    return typeof answer === 'boolean' ? answer : null
  }

  /**
   * See `PtyController.inspectProcess`: `unavailable` also for a live PTY whose provider answered
   * nothing and no longer vouches for it ({@link providerVouchesFor}) — its host is unreachable
   * (the pty host provider after `detach()`), not merely unable to read a name.
   */
  async inspect(ptyId: string, options: PtyInspectOptions): Promise<PtyProcessInspection> {
    const expected = options.expectedIncarnationId
    const answered = await this.#ofLive(ptyId, async (record) => {
      if (expected !== undefined && expected !== record.incarnationId) return null
      const [foregroundProcess, hasChildProcesses] = await Promise.all([
        this.foregroundProcess(ptyId),
        options.scanChildProcesses === true ? this.hasChildProcesses(ptyId) : null,
      ])
      if (foregroundProcess === null && hasChildProcesses === null && providerVouchesFor(this.#core, record) === false) return null
      return { foregroundProcess, hasChildProcesses }
    })
    return answered ?? { foregroundProcess: null, hasChildProcesses: null, unavailable: true }
  }

  /** See `PtyController.clearBuffer`. */
  async clearBuffer(ptyId: string): Promise<void> {
    await this.#askLive(ptyId, 'clearBuffer', (provider) => provider.clearBuffer?.(ptyId))
  }

  /**
   * See `PtyController.serializeProviderBuffer`: a live PTY's snapshot, or an ended one's from a
   * provider that kept its history (the pty host does, `keepHistory` on a stop). A snapshot must
   * be the record's incarnation's: one naming another is refused, and an ended PTY's must name its
   * own — without that proof the screen could be a later process's under the same id.
   */
  async providerBuffer(ptyId: string, options: { scrollbackRows?: number | undefined }): Promise<PtyProviderBufferSnapshot | null> {
    const record = this.#core.records.get(ptyId)
    if (record === undefined || record.state === 'unverified') return null
    const ended = record.state === 'exited'
    if (ended && record.incarnationId === undefined) return null
    // An ended PTY's provider may have forgotten it and throw: no kept screen, not a provider fault.
    // So for a PTY whose exit arrived while the provider answered (the pty host refuses the
    // snapshot of an ended session whose screen it released as `history_released`).
    const incarnationId = record.incarnationId
    const stillLive = (): boolean => this.#core.records.get(ptyId) === record && record.state === 'live' && record.incarnationId === incarnationId
    const snapshot = await this.#ask(record.provider, ptyId, ended ? null : 'getBufferSnapshot', (provider) => provider.getBufferSnapshot?.(ptyId, options), stillLive)
    if (snapshot === null || typeof snapshot !== 'object') return null
    const proven = ended ? snapshot.incarnationId === record.incarnationId : snapshot.incarnationId === undefined || snapshot.incarnationId === record.incarnationId
    // A field the provider answered `undefined` is absent in the controller's answer (see definedFields).
    return proven ? definedFields(snapshot) : null
  }

  /** The foreground evidence the owning provider confirms for a live PTY; `null` otherwise. */
  async confirmForeground(ptyId: string): Promise<Awaited<ReturnType<typeof confirmForegroundOf>> | null> {
    // A confirmation that outlives the process it was about cannot authorize its successor under
    // the same id (nor speak for one that ended meanwhile): "null / false on doubt".
    return this.#ofLive(ptyId, (record) =>
      this.#core.timers.orAtDispose(
        confirmForegroundOf(record.provider, ptyId, (error) => reportProviderThrow(this.#core, record.provider, 'confirmForeground', error, ptyId)),
        null,
      ),
    )
  }

  /** Whether the host's provider can give foreground evidence; `false` for a host with no provider. */
  supportsForegroundEvidence(hostId: ExecutionHostId): boolean {
    const provider = this.#core.options.providers.get(hostId)
    return provider !== undefined && providerSupportsForegroundEvidence(provider)
  }

  /** See `PtyController.resetInputModes`: the view's reset sequence first, then the provider's own model. */
  async resetInputModes(ptyId: string): Promise<void> {
    const record = this.#core.records.get(ptyId)
    if (record === undefined || record.state !== 'live') return
    this.#core.emit('inputModesReset', { ptyId, ...incarnationOf(record.incarnationId), hostId: record.hostId, data: INPUT_MODE_RESET_SEQUENCE })
    await this.#askLive(ptyId, 'resetInputModes', (provider) => provider.resetInputModes?.(ptyId))
  }

  /**
   * Ask the provider of a live PTY; `null` for an unknown or ended PTY, an `undefined` answer, or
   * a throw (reported `provider_threw`, naming `what`).
   */
  async #askLive<T>(ptyId: string, what: string, ask: (provider: PtyProvider) => T | Promise<T> | undefined): Promise<T | null> {
    return this.#ofLive(ptyId, (record) => this.#ask(record.provider, ptyId, what, ask))
  }

  /**
   * `answer` about the live PTY of `ptyId` (`null` when there is none), kept only if the same
   * incarnation is still the id's live PTY once it settles: one that ended, or whose id was
   * respawned, while the provider answered gets `null`, as an ended PTY does — the answer may
   * describe a process that is gone, or its successor.
   */
  async #ofLive<T>(ptyId: string, answer: (record: PtyRecord) => Promise<T | null>): Promise<T | null> {
    const record = this.#core.records.get(ptyId)
    if (record === undefined || record.state !== 'live') return null
    const incarnationId = record.incarnationId
    const value = await answer(record)
    const stillLive = this.#core.records.get(ptyId) === record && record.state === 'live' && record.incarnationId === incarnationId
    return stillLive ? value : null
  }

  /**
   * `ask` of `provider`; `null` for no answer, or a throw — reported `provider_threw` as a fault of
   * `what`, unless `what` is `null` (a question a provider may well refuse) or `reportIf` says no
   * once the throw arrived.
   */
  async #ask<T>(provider: PtyProvider, ptyId: string, what: string | null, ask: (provider: PtyProvider) => T | Promise<T> | undefined, reportIf?: () => boolean): Promise<T | null> {
    try {
      // Given up at dispose: a provider that never answers must not hold its caller for good.
      const answer = await this.#core.timers.orAtDispose(Promise.resolve(ask(provider)), undefined)
      return answer === undefined ? null : answer
    } catch (error) {
      if (what !== null && (reportIf?.() ?? true)) reportProviderThrow(this.#core, provider, what, error, ptyId)
      return null
    }
  }
}
