/**
 * The ptykit side: the default controller over the node-pty provider, used the way a host uses
 * it — one controller, listeners on its `data` and `exit` events, every chunk acknowledged.
 */
import { createPtyController } from 'ptykit/controller'
import { createNodePtyProvider } from 'ptykit/node-pty'
import { nowMs } from './stats.js'

/** The controller the benchmark drives. */
export type BenchController = ReturnType<typeof createPtyController>

/** What the tracker knows about one PTY, filled in by the controller's events. */
export type TrackedPty = {
  /** Characters received so far. */
  chars: number
  /** `data` events received so far. */
  chunks: number
  /** When the first chunk arrived (`nowMs()`), or `null`. */
  firstDataAt: number | null
  /** When the last chunk arrived (`nowMs()`), or `null`. */
  lastDataAt: number | null
  /** Resolves with the exit event's arrival time (`nowMs()`). */
  exited: Promise<number>
}

type Entry = TrackedPty & { resolveExit: (at: number) => void }

/**
 * Routes the controller's events to per-PTY records. Events can arrive before `spawn()` resolves
 * (a fast child prints and exits first), so records are created by whichever comes first.
 */
export type PtyTracker = {
  /** The record of `ptyId`, created if needed. */
  get(ptyId: string): TrackedPty
  /** Forgets `ptyId` (call after its exit, so a long run does not accumulate records). */
  forget(ptyId: string): void
  /** Removes the tracker's listeners. */
  detach(): void
}

/**
 * Listens to `controller` and acknowledges every chunk at once (a consumer that keeps up, so the
 * controller's flow control never pauses the producer on the throughput figures).
 */
export function trackPtys(controller: BenchController, options: { acknowledge: boolean } = { acknowledge: true }): PtyTracker {
  const entries = new Map<string, Entry>()
  const entry = (id: string): Entry => {
    let e = entries.get(id)
    if (e === undefined) {
      let resolveExit!: (at: number) => void
      const exited = new Promise<number>((resolve) => {
        resolveExit = resolve
      })
      e = { chars: 0, chunks: 0, firstDataAt: null, lastDataAt: null, exited, resolveExit }
      entries.set(id, e)
    }
    return e
  }
  const onData = (event: { ptyId: string; data: string }): void => {
    const at = nowMs()
    const e = entry(event.ptyId)
    e.chars += event.data.length
    e.chunks += 1
    if (e.firstDataAt === null) e.firstDataAt = at
    e.lastDataAt = at
    if (options.acknowledge) controller.acknowledgeData(event.ptyId, event.data.length)
  }
  const onExit = (event: { ptyId: string }): void => {
    entry(event.ptyId).resolveExit(nowMs())
  }
  controller.on('data', onData)
  controller.on('exit', onExit)
  return {
    get: entry,
    forget: (id) => {
      entries.delete(id)
    },
    detach: () => {
      controller.off('data', onData)
      controller.off('exit', onExit)
    },
  }
}

/** A controller over a fresh node-pty provider, with its tracker. */
export type PtykitSide = {
  /** The controller. */
  controller: BenchController
  /** Its event tracker. */
  tracker: PtyTracker
  /** Detaches the tracker and disposes the controller (which stops any PTY left). */
  dispose(): Promise<void>
}

/**
 * Creates the ptykit side. `providerOptions` go to `createNodePtyProvider` unchanged,
 * `controllerOptions` (such as `dataBatchMs`) to `createPtyController`.
 */
export function createPtykitSide(
  providerOptions?: Parameters<typeof createNodePtyProvider>[0],
  trackerOptions?: { acknowledge: boolean },
  controllerOptions?: Omit<Parameters<typeof createPtyController>[0], 'provider' | 'providers'>,
): PtykitSide {
  const provider = providerOptions === undefined ? createNodePtyProvider() : createNodePtyProvider(providerOptions)
  const controller = createPtyController({ ...controllerOptions, provider })
  const tracker = trackPtys(controller, trackerOptions)
  return {
    controller,
    tracker,
    dispose: async () => {
      tracker.detach()
      await controller.dispose()
    },
  }
}
