/**
 * The controller's CPU per output chunk, without a PTY: a minimal provider (flow control on, as
 * the node-pty provider's) emits 4 KiB chunks of one live PTY through the controller to one
 * `data` listener, timed against the same chunks
 * emitted by a bare `EventEmitter` to the same listener (the floor: what raw node-pty's own
 * `onData` forwarding costs is not in either) — once with a listener that only counts (the
 * never-acknowledging throughput row) and once with one that also calls `acknowledgeData` for
 * every chunk (the acknowledging row). Not a test and not part of `npm run bench`; for
 * looking at the per-chunk path of the throughput rows without the PTY's noise:
 *
 * ```sh
 * npm run build && TSX_TSCONFIG_PATH=bench/tsconfig.dist.json node --import tsx bench/chunk-cost.ts [CHUNKS=200000]
 * ```
 */
import { EventEmitter } from 'node:events'
import { createPtyController } from 'ptykit/controller'
import { WRITE_ACCEPTED, type PtyDataEvent, type PtyIncarnationId, type PtyProvider } from 'ptykit/contracts'
import { nowMs } from './stats.js'

const CHUNKS = Number(process.argv[2] ?? 200_000)
const chunk = 'x'.repeat(4096)

let spawned = 0
const dataListeners = new Set<(event: PtyDataEvent) => void>()
const incarnationId = 'incarnation-1' as PtyIncarnationId
const provider: PtyProvider = {
  name: 'chunk-cost',
  spawn: async () => ({ id: `p${++spawned}`, pid: spawned, incarnationId, isReattach: false, providerSequence: { value: 0, generation: 'reset' }, hostReportsChildExitStatus: true }),
  write: () => WRITE_ACCEPTED,
  resize: () => true,
  shutdown: async () => undefined,
  pauseProducer: () => undefined,
  resumeProducer: () => undefined,
  listProcesses: async () => [],
  onData: (listener) => {
    dataListeners.add(listener)
    return () => dataListeners.delete(listener)
  },
  onExit: () => () => undefined,
}
const controller = createPtyController({ provider })
let seen = 0
controller.on('data', (event) => {
  seen += event.data.length
  // The second PTY's consumer acknowledges every chunk from its first: its count stays at zero.
  if (event.ptyId === acknowledged) controller.acknowledgeData(event.ptyId, event.data.length)
})
const { id } = await controller.spawn({ file: '/bin/sh' })
const { id: acknowledged } = await controller.spawn({ file: '/bin/sh' })

const bare = new EventEmitter()
bare.on('data', (data: string) => {
  seen += data.length
})

function timeNsPerChunk(emitOne: () => void): number {
  const t0 = nowMs()
  for (let i = 0; i < CHUNKS; i++) emitOne()
  return ((nowMs() - t0) * 1e6) / CHUNKS
}

/** One chunk of `ptyId` through the controller, as a provider builds its event: one object per chunk. */
const throughController = (ptyId: string): void => {
  const event = { id: ptyId, data: chunk, incarnationId }
  for (const listener of dataListeners) listener(event)
}
const rounds: { bare: number; controller: number; acknowledging: number }[] = []
for (let round = 0; round < 7; round++) {
  rounds.push({
    bare: timeNsPerChunk(() => bare.emit('data', chunk)),
    controller: timeNsPerChunk(() => throughController(id)),
    acknowledging: timeNsPerChunk(() => throughController(acknowledged)),
  })
}
const median = (values: number[]): number => values.slice().sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN
const b = median(rounds.map((r) => r.bare))
const c = median(rounds.map((r) => r.controller))
const a = median(rounds.map((r) => r.acknowledging))
process.stdout.write(
  `${CHUNKS} chunks of 4 KiB, median of 7 rounds: bare EventEmitter ${b.toFixed(0)} ns/chunk, provider → controller ${c.toFixed(0)} ns/chunk (+${(c - b).toFixed(0)} ns), acknowledging every chunk ${a.toFixed(0)} ns/chunk (+${(a - b).toFixed(0)} ns)\n`,
)
if (seen === 0) throw new Error('nothing was delivered')
// The acknowledgements kept the count at zero: flow control never paused the producer.
const flow = controller.getFlowControlState(acknowledged)
if (flow?.paused !== false || flow.unacknowledgedChars !== 0) throw new Error(`the acknowledging consumer's PTY was held: ${JSON.stringify(flow)}`)
await controller.dispose()
