/**
 * The exit drain's proof where the master alone proves nothing (other Unixes, or the read-out
 * turned off; see `exit-drain.ts`): hold the PTY's slave side, and send a marker through it.
 */
import { closeSync, writeSync } from 'node:fs'
import type { DrainChunk, DrainEndProof, DrainLink } from './drain-end-proof.js'
import { createMarkerScanner, type MarkerScanner } from './drain-marker.js'
import type { MasterReadOut } from './drain-read-out.js'

/**
 * Retry interval when the marker does not fit yet (`EAGAIN`: the kernel's buffer toward the master
 * is full). The reader empties ~4 KB per event-loop turn, so room appears within a turn or two.
 */
export const NODE_PTY_DRAIN_RETRY_INTERVAL_MS = 2

/**
 * The drain's proof through a held slave side.
 *
 * **Elsewhere (or with the read-out off): hold the slave side.** Right after the spawn the drain
 * opens the PTY's slave side itself, so the master never hangs up while the child runs or dies.
 * Once the child is proven gone it writes a random marker into the held slave fd: the PTY is a
 * FIFO, so when the marker comes out of the master, every byte the child wrote has been read. The
 * marker is cut from the stream, the slave fd is closed, the master reads its (now empty) end, and
 * node-pty reports the exit.
 */
export class MarkerProof<C extends DrainChunk> implements DrainEndProof<C> {
  readonly #link: DrainLink<C>
  /** The PTY's slave side, held from the spawn until the drain is released. */
  #slaveFd: number | null
  /** The read-out tried first at the death (the read-out on and the master readable), or `null`. */
  readonly #readOut: MasterReadOut<C> | null
  // Why lazy: most of a PTY's life is spent watching; the marker and its scanner are only needed
  // once the child is gone, so an idle PTY does not carry them.
  #scanner: MarkerScanner<C> | null = null
  #markerOffset = 0
  #retryTimer: NodeJS.Timeout | null = null

  /**
   * @param link - the drain this marker proves the end for (and delivers output through; in bytes
   * mode the marker is found and cut in bytes, so no byte is decoded or changed)
   * @param slaveFd - the PTY's slave side, opened by the drain (`O_NONBLOCK`); closed at the release
   * @param readOut - a read-out to try at the death before the marker, or `null`
   */
  constructor(link: DrainLink<C>, slaveFd: number, readOut: MasterReadOut<C> | null) {
    this.#link = link
    this.#slaveFd = slaveFd
    this.#readOut = readOut
  }

  get endQueued(): boolean {
    return false
  }

  proveAtDeath(): boolean {
    return this.#readOut !== null && this.#readOut.proveWithSlaveHeld()
  }

  awaitProof(): void {
    this.#scanner ??= createMarkerScanner<C>(this.#link.marker, this.#link.bytes)
    // Send the marker.
    this.#writeMarker()
  }

  retry(): void {
    this.#writeMarker()
  }

  take(chunk: C): boolean {
    if (this.#markerOffset === 0 || this.#scanner === null || this.#scanner.spent) return false
    const scan = this.#scanner.push(chunk)
    if (scan.before.length > 0) this.#link.emit(scan.before)
    if (scan.found) {
      if (this.#link.state === 'marking') {
        this.#link.prove('marker')
        this.#link.release()
      }
      // Why: text after the marker was written later, by a process that outlived the leader.
      if (scan.after.length > 0) this.#link.emit(scan.after)
      return true
    }
    // The reader made room: a marker that did not fit may fit now.
    this.#writeMarker()
    return true
  }

  flush(): C | null {
    return this.#scanner === null || this.#scanner.spent ? null : this.#scanner.flush()
  }

  stopRetrying(): void {
    if (this.#retryTimer !== null) clearTimeout(this.#retryTimer)
    this.#retryTimer = null
  }

  /** Close the held slave side so the master reaches its end. */
  release(): void {
    this.stopRetrying()
    if (this.#slaveFd !== null) {
      // Why synchronous: the master's end of file follows this close, and the exit follows that;
      // closing through the thread pool was measured to delay the exit by a further ~0.05 ms.
      try {
        closeSync(this.#slaveFd)
      } catch {
        // Already closed: nothing to release.
      }
      this.#slaveFd = null
    }
  }

  proofOfStreamError(): null {
    // Only with no slave fd held is a read error the master's true end (`ReadOutProof`); here
    // node-pty's destroy is held off as any other until the marker proves the end.
    return null
  }

  /** Write (the rest of) the marker into the slave side; retry later when it does not fit. */
  #writeMarker(): void {
    const marker = this.#link.marker
    if (this.#link.state !== 'marking' || this.#slaveFd === null || this.#markerOffset >= marker.length) return
    try {
      this.#markerOffset += writeSync(this.#slaveFd, this.#markerOffset === 0 ? marker : marker.slice(this.#markerOffset))
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EAGAIN') {
        // The slave side is unusable (hung up): nothing more can arrive through it either.
        this.#link.prove('give-up')
        this.#link.release()
        return
      }
    }
    if (this.#markerOffset < marker.length && !this.#link.paused && this.#retryTimer === null) {
      this.#retryTimer = setTimeout(() => {
        this.#retryTimer = null
        this.#writeMarker()
      }, NODE_PTY_DRAIN_RETRY_INTERVAL_MS)
    }
  }
}
