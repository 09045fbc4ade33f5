import { isOptionsObject } from '../contracts/known-options.js'
import { findMisspeltSpawnOption } from '../contracts/spawn-options.js'
import { toPtyIncarnationId, type ProviderSpawnOptions, type PtySpawnResult } from '../contracts/index.js'
import { describeDescriptorShortage, descriptorShortage, NODE_PTY_LOAD_DESCRIPTOR_HEADROOM } from './descriptor-headroom.js'
import { describeForkFailure } from './fork-failure.js'
import { createNodePtyLaunchPlan, type NodePtyLaunchPlan } from './launch-plan.js'
import { mintUuid } from './mint-uuid.js'
import { loadNodePtyModule, type NodePtyModule } from './node-pty-module.js'
import { NodePtyOptionError } from './node-pty-option-error.js'
import { NodePtyProviderError } from './node-pty-provider-error.js'
import { NodePtySession, type NodePtySessionHooks } from './node-pty-session.js'
import { inheritanceOf } from './spawn-inheritance.js'
import type { NodePtyProviderContext } from './provider-context.js'
import { NODE_PTY_DEFAULT_TERMINAL_NAME } from './provider-options.js'

/** The reply to a spawn that attached to a live session instead of starting a process. */
function attachReply(session: NodePtySession): PtySpawnResult {
  return {
    id: session.id,
    pid: session.pid,
    incarnationId: session.incarnationId,
    isReattach: true,
    providerSequence: { value: session.charsEmitted, generation: 'continued' },
    hostReportsChildExitStatus: session.hostReportsChildExitStatus,
    cols: session.terminal.cols,
    rows: session.terminal.rows,
  }
}

/** node-pty 1.1's native failures to open a PTY or start its process, which drop `errno` (`pty.cc`). */
const NODE_PTY_FORK_FAILURE_MESSAGE = /^(?:forkpty\(3\)|openpty\(3\)|posix_spawnp) failed\.$/

/**
 * The node-pty provider's `spawn`: attach to a live session of this provider, or validate the
 * options, fork through node-pty and wire the new session (`onStarted` tracks it).
 */
export function createNodePtySpawn(
  context: NodePtyProviderContext,
  sessionHooks: NodePtySessionHooks,
  onStarted: (session: NodePtySession) => void,
): (options: ProviderSpawnOptions) => Promise<PtySpawnResult> {
  const { options, sessions, isWindows, platform } = context
  let modulePromise: Promise<NodePtyModule> | null = null
  /** node-pty once loaded: a spawn then takes it as it is, not through another await of its promise. */
  let loadedModule: NodePtyModule | null = null

  function loadModule(): Promise<NodePtyModule> {
    if (modulePromise === null) {
      // Not loaded out of descriptors: Node would remember node-pty as absent for good (see
      // descriptorShortage). Refused instead, and loaded by a later spawn.
      const shortage = descriptorShortage(NODE_PTY_LOAD_DESCRIPTOR_HEADROOM)
      if (shortage !== null) {
        const what = describeDescriptorShortage(shortage)
        return Promise.reject(
          new NodePtyProviderError('spawn_failed', `Could not load node-pty to start a PTY: ${what}; nothing was loaded, and the next spawn tries again`),
        )
      }
      modulePromise = loadNodePtyModule(options.loadNodePty).then(
        (loaded) => (loadedModule = loaded),
        (error: unknown) => {
          // A failed load is retried on the next spawn (the host may install node-pty meanwhile).
          modulePromise = null
          throw error
        },
      )
    }
    return modulePromise
  }

  /**
   * The refusal of a new process under an id a session still holds. Its leader may already be
   * dead, its exit still on the way: the id is free once that exit is delivered, and the message
   * says so rather than calling a dead process live.
   */
  function idInUse(session: NodePtySession): NodePtyProviderError {
    const { id, incarnationId } = session
    const why = session.leaderGone
      ? `PTY ${JSON.stringify(id)} has exited; its exit is still being delivered, and the id is free once it is`
      : 'a live PTY already has that id'
    return new NodePtyProviderError('pty_id_in_use', `Cannot create PTY ${JSON.stringify(id)}: ${why}`, { ptyId: id, liveIncarnationId: incarnationId })
  }

  /**
   * A spawn that names a session this provider holds: attach to it, or refuse. `undefined`: start
   * a process. An attach is a claim that the process runs, so the leader is looked at now (one
   * read of its pid): one that died while its exit is still on the way is absent to an attach.
   */
  function attachOrRefuse(spawnOptions: ProviderSpawnOptions): PtySpawnResult | undefined {
    const { sessionId, expectedIncarnationId } = spawnOptions
    const held = sessionId === undefined ? undefined : sessions.live(sessionId)
    const running = held === undefined ? undefined : sessions.running(held.id)
    if (spawnOptions.attachOnly === true) {
      // node-pty cannot re-attach to a process it did not start in this host process: only a
      // running session of this provider can be attached to.
      if (running === undefined) {
        const why = held === undefined ? 'no live PTY has that id here' : 'its process has exited (its exit is still being delivered)'
        throw new NodePtyProviderError(
          'pty_absent',
          `Cannot attach to PTY ${sessionId === undefined ? '(no session id)' : JSON.stringify(sessionId)}: ${why}`,
          { ptyId: sessionId, expectedIncarnationId },
        )
      }
      if (expectedIncarnationId !== undefined && running.incarnationId !== expectedIncarnationId) {
        // Why not `pty_absent`: a process holds the id, so the expected one is not proven gone.
        throw new NodePtyProviderError(
          'pty_live_other_incarnation',
          `Cannot attach to PTY ${JSON.stringify(sessionId)}: the live process is incarnation ${JSON.stringify(running.incarnationId)}, not ${JSON.stringify(expectedIncarnationId)}`,
          { ptyId: sessionId, expectedIncarnationId, liveIncarnationId: running.incarnationId },
        )
      }
      return attachReply(running)
    }
    if (held === undefined) return undefined
    // A dead leader's id cannot be attached to, nor reused before its exit is delivered.
    if (spawnOptions.isNewSession === true || running === undefined) throw idInUse(held)
    return attachReply(running)
  }

  /** Caller-named ids whose process is forked and whose session is not yet wired. */
  const idsBeingWired = new Set<string>()

  function idBeingWired(id: string): NodePtyProviderError {
    return new NodePtyProviderError('pty_id_in_use', `Cannot create PTY ${JSON.stringify(id)}: another spawn under that id has just started its process`, { ptyId: id })
  }

  /** Fork through node-pty and wire the new session one microtask later (see below): once this resolves, the process is followed. */
  async function forkSession(spawnOptions: ProviderSpawnOptions, plan: NodePtyLaunchPlan, nodePty: NodePtyModule): Promise<{ id: string; session: NodePtySession }> {
    const { sessionId } = spawnOptions
    let terminal
    try {
      terminal = nodePty.spawn(plan.file, plan.args, {
        name: options.terminalName ?? NODE_PTY_DEFAULT_TERMINAL_NAME,
        cols: plan.cols,
        rows: plan.rows,
        cwd: plan.cwd,
        env: plan.env,
        // 'utf8' in bytes mode too: it gives the PTY IUTF8; the session stops the decoding itself.
        encoding: 'utf8',
      })
    } catch (error) {
      // node-pty's message drops errno ("forkpty(3) failed."): say what ran out, asked now. Only for
      // such a failure: another throw (a JavaScript one) is not a fork's, and must not be blamed on
      // a process limit.
      const message = error instanceof Error ? error.message : String(error)
      const ranOut = isWindows || !NODE_PTY_FORK_FAILURE_MESSAGE.test(message) ? null : describeForkFailure()
      const detail = `${message}${ranOut === null ? '' : ` (${ranOut})`}`
      throw new NodePtyProviderError('spawn_failed', `node-pty could not start ${JSON.stringify(plan.file)}: ${detail}`, {
        cause: error,
        ptyId: sessionId,
      })
    }
    // The session is wired one microtask after the fork. Why: spawns issued together reach their
    // forks in the same turn, and whatever runs between two forks writes pages the last fork made
    // copy-on-write — each page written then faults once per fork (~14 µs a fault on a VM). Wiring
    // after the await runs every spawn's wiring after the turn's last fork: ~4 fewer faults per
    // spawn in rounds of 50 (docs/performance.md, thirteenth session). No event can come in
    // between: node-pty delivers output and exits from the event loop, never in a microtask. A
    // dispose called meanwhile waits one microtask before it reads the table (see the provider's
    // `dispose`), so this session is in it, and stopped as every other one is.
    await undefined
    // Minted after the fork: a fresh id cannot be in use, and the fork is the spawn's critical
    // path (a few µs of entropy and string building there, cold, delayed every first byte).
    const id = sessionId ?? mintUuid()
    // A minted id never exited here: only a caller's id can be in the table of exited ids.
    if (sessionId !== undefined) sessions.forgetExited(id)
    let session: NodePtySession
    try {
      session = new NodePtySession(
        {
          id,
          incarnationId: toPtyIncarnationId(mintUuid()),
          terminal,
          file: plan.file,
          drainOutputAtExit: context.drainOutputAtExit && !isWindows,
          // Windows' terminal defers its output until its agent is ready: keep to its public events there.
          readMasterStream: !isWindows,
          bytes: context.bytesOutput,
          maxPendingInputBytes: context.maxPendingInputBytes,
          hostReportsChildExitStatus: context.hostReportsChildExitStatus,
          command: plan.command,
          scopeId: spawnOptions.scopeId,
          slotKey: spawnOptions.slotKey,
          claimKey: spawnOptions.claimKey,
          // Not read here: the first look at the leader learns it, and a short-lived PTY (whose
          // exit node-pty reports before anything looks) never pays the /proc read. Why that keeps
          // the pid-reuse guarantee: leader-identity.ts.
          leaderStartTime: null,
        },
        sessionHooks,
      )
    } catch (error) {
      // The process exists but cannot be followed: nobody would ever stop it, so kill it now.
      try {
        if (isWindows) terminal.kill()
        else terminal.kill('SIGKILL')
      } catch {
        // Already gone.
      }
      throw new NodePtyProviderError('spawn_failed', `Could not wire up the PTY of ${JSON.stringify(plan.file)}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
        ptyId: id,
      })
    }
    // A stand-in (or a future node-pty) may report the exit while the session is being wired.
    if (session.exit === null) onStarted(session)
    return { id, session }
  }

  /**
   * Fork and wire the session ({@link forkSession}), then commit and reply. A caller-named id held
   * by `spawn` (`idsBeingWired`) is released once the session is wired or its wiring failed — not
   * after the commit hook, whose rollback stop may outlast the exit.
   */
  async function forkAndWire(spawnOptions: ProviderSpawnOptions, plan: NodePtyLaunchPlan, nodePty: NodePtyModule): Promise<PtySpawnResult> {
    let started: { id: string; session: NodePtySession }
    try {
      started = await forkSession(spawnOptions, plan, nodePty)
    } finally {
      if (spawnOptions.sessionId !== undefined) idsBeingWired.delete(spawnOptions.sessionId)
    }
    const { id, session } = started

    try {
      spawnOptions.onPtySpawnCommitted?.()
    } catch (error) {
      // The caller's hook failed: it never learns of this process, so none may be left behind.
      await context.stopSession(session, { immediate: true, deadlineAt: Date.now() + context.defaultDeadlineMs }).catch(() => undefined)
      throw error
    }

    const result: PtySpawnResult = {
      id,
      pid: session.pid,
      incarnationId: session.incarnationId,
      isReattach: false,
      providerSequence: { value: 0, generation: 'reset' },
      hostReportsChildExitStatus: context.hostReportsChildExitStatus,
      cols: plan.cols,
      rows: plan.rows,
    }
    if (session.exit !== null) result.exitedBeforeSpawnReply = true
    return result
  }

  return async function spawn(spawnOptions: ProviderSpawnOptions): Promise<PtySpawnResult> {
    context.assertNotDisposed('spawn')
    if (!isOptionsObject(spawnOptions)) {
      throw new NodePtyOptionError('options', 'an object', spawnOptions)
    }
    // A misspelt option (`cdw`, `sessionID`, `id`) would be ignored, the default used.
    const misspelt = findMisspeltSpawnOption(spawnOptions)
    if (misspelt !== undefined) throw new NodePtyOptionError(misspelt.name, misspelt.expected, misspelt.value, undefined, misspelt.secret)
    const { sessionId } = spawnOptions
    if (sessionId !== undefined && (typeof sessionId !== 'string' || sessionId.length === 0)) {
      throw new NodePtyOptionError('sessionId', 'a non-empty string', sessionId)
    }
    const attached = attachOrRefuse(spawnOptions)
    if (attached !== undefined) return attached

    // Every refusal happens here, before node-pty is even loaded. A spawn made for another process
    // (the pty host's app) inherits that process's environment and directory, unless this
    // provider's options name their own.
    const inherited = inheritanceOf(spawnOptions)
    const appCwd = options.defaultCwd === undefined ? inherited?.defaultCwd : undefined
    const plan = await createNodePtyLaunchPlan(spawnOptions, {
      env: options.inheritedEnv ?? inherited?.env ?? process.env,
      defaultCwd: options.defaultCwd ?? appCwd ?? process.cwd(),
      defaultCwdIsOption: options.defaultCwd !== undefined,
      defaultCwdIsApps: appCwd !== undefined,
      platform,
      defaultShell: options.defaultShell,
    })
    // Why not always awaited: every await is a promise reaction and a turn per spawn, allocated
    // between two forks; the launch plan's await above already lets other calls run first.
    const nodePty = loadedModule ?? (await loadModule())

    // The awaits above let other calls run: look again.
    context.assertNotDisposed('spawn')
    if (sessionId === undefined) return forkAndWire(spawnOptions, plan, nodePty)
    const holder = sessions.live(sessionId)
    if (holder !== undefined) throw idInUse(holder)
    if (idsBeingWired.has(sessionId)) throw idBeingWired(sessionId)
    // Held from the fork until the session is in the table (a microtask later; forkAndWire releases it):
    // no other spawn may start a second process under this id meanwhile.
    idsBeingWired.add(sessionId)
    return forkAndWire(spawnOptions, plan, nodePty)
  }
}
