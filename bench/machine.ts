/**
 * The machine and versions a run was measured on, recorded with every result: figures from a
 * different machine are not comparable.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'

/** The machine description stored in the results. */
export type MachineInfo = {
  /** CPUs available to this process. */
  nproc: number
  /** CPU model of the first core. */
  cpuModel: string
  /** Total memory, bytes. */
  totalMemory: number
  /** `os.type() os.release() os.arch()`. */
  kernel: string
  /** `process.version`. */
  node: string
  /** libuv bundled with this Node (the tail-loss bug depends on it). */
  libuv: string
  /** The installed node-pty version. */
  nodePty: string
  /** The ptykit version from package.json. */
  ptykit: string
}

/** Reads the machine description. */
export function readMachineInfo(): MachineInfo {
  const require = createRequire(import.meta.url)
  const nodePtyPackage = require('node-pty/package.json') as { version: string }
  const ownPackage = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
  return {
    nproc: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    totalMemory: os.totalmem(),
    kernel: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    libuv: process.versions.uv ?? 'unknown',
    nodePty: nodePtyPackage.version,
    ptykit: ownPackage.version,
  }
}
