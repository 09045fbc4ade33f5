import type { PtySlot, PtySlotAdoption, PtySlotCreateRelease, PtySpawnReply } from '../contracts/index.js'
import { PtySpawnError, slotStoreKey, type PtySlotOwner, type PtySlotStore } from '../spawn/index.js'
import { describeSlot, describeSlotOwnerConflict, readSlotOwnerViews } from '../spawn/slot-owner-views.js'
import { describeValue } from './argument-validation.js'
import { argumentRefusal } from '../contracts/argument-refusal.js'

/** @throws TypeError naming the `slot` argument or option unless `value` is a slot with a non-empty string key. */
export function assertSlot(kind: 'argument' | 'option', value: unknown): asserts value is PtySlot {
  const slot = value as { key?: unknown; scopeId?: unknown } | null
  if (
    slot === null ||
    typeof slot !== 'object' ||
    typeof slot.key !== 'string' ||
    slot.key.length === 0 ||
    (slot.scopeId !== undefined && typeof slot.scopeId !== 'string')
  ) {
    throw argumentRefusal(`Expected the \`slot\` ${kind} to be a slot ({ key, scopeId? }) with a non-empty key, got ${describeValue(value)}`, 'slot', value)
  }
}

type Hold = { release: PtySlotCreateRelease; turn: Promise<void> }

/**
 * Per-slot turns: slot spawns, adoptions and `claimSlotCreate` claims of one slot run one after
 * another, in the order they asked. So two callers never create the same slot's PTY at once: the
 * second finds the first one's binding and re-attaches to it.
 */
export class SlotCreateGate {
  /** Per slot key: resolves when every hold taken so far was released. */
  readonly #tails = new Map<string, Promise<void>>()
  /** The turn of each live claim, keyed by its release function. */
  readonly #claims = new WeakMap<PtySlotCreateRelease, { key: string; turn: Promise<void> }>()
  /**
   * How to end each wait for a turn still under way: {@link SlotCreateGate.close} ends them all (the
   * work itself refuses a disposed controller). A wait leaves once its turn came. Why not a race
   * against one promise settled at close: every race left a reaction on that promise, which lives
   * as long as the controller, so memory grew with every slot spawn and adoption.
   */
  readonly #waits = new Set<() => void>()
  #closed = false

  /** End every wait for a turn, now and later (the controller was disposed; an unreleased claim must not hang its callers). */
  close(): void {
    this.#closed = true
    for (const end of [...this.#waits]) end()
  }

  /** Resolves once `turn` came, or the gate was closed, whichever is first; leaves nothing behind. */
  #untilTurnOrClose(turn: Promise<void>): Promise<void> {
    if (this.#closed) return Promise.resolve()
    return new Promise<void>((resolve) => {
      const end = (): void => {
        this.#waits.delete(end)
        resolve()
      }
      this.#waits.add(end)
      void turn.then(end, end)
    })
  }

  /** Take the slot's next turn now; it begins once every earlier hold of the slot was released. */
  hold(slot: PtySlot): Hold {
    const key = slotStoreKey(slot)
    const turn = this.#tails.get(key) ?? Promise.resolve()
    let finish!: () => void
    const finished = new Promise<void>((resolve) => {
      finish = resolve
    })
    const tail = turn.then(() => finished)
    this.#tails.set(key, tail)
    let released = false
    const release: PtySlotCreateRelease = () => {
      if (released) return
      released = true
      this.#claims.delete(release)
      finish()
      void tail.then(() => {
        if (this.#tails.get(key) === tail) this.#tails.delete(key)
      })
    }
    return { release, turn }
  }

  /** `claimSlotCreate`: a hold whose release the caller keeps (and may pass to spawns and adoptions of the slot). */
  claim(slot: PtySlot): PtySlotCreateRelease {
    const { release, turn } = this.hold(slot)
    this.#claims.set(release, { key: slotStoreKey(slot), turn })
    return release
  }

  /**
   * Run `work` in its turn: inside the caller's live `claim` for this slot when given, else in a
   * hold of its own released when `work` settles.
   *
   * @throws TypeError when `claim` is not a live claim of this slot.
   */
  async run<T>(slot: PtySlot, claim: PtySlotCreateRelease | undefined, work: () => Promise<T>): Promise<T> {
    if (claim !== undefined) {
      const held = this.#claims.get(claim)
      if (held === undefined || held.key !== slotStoreKey(slot)) {
        throw argumentRefusal(`Expected the \`slotCreateClaim\` option to be an unreleased claimSlotCreate claim of ${describeSlot(slot, 'slot')}, got ${describeValue(claim)}`, 'slotCreateClaim', claim)
      }
      await this.#untilTurnOrClose(held.turn)
      return work()
    }
    const { release, turn } = this.hold(slot)
    try {
      await this.#untilTurnOrClose(turn)
      return await work()
    } finally {
      release()
    }
  }
}

/** What {@link adoptSlotOwner} needs from the controller. */
export type SlotAdoptionHost = {
  /** The slot store. */
  store: PtySlotStore
  /** The reply for a PTY the controller tracks live; `null` when it does not. */
  liveReply(ptyId: string): PtySpawnReply | null
  /** Attach-only adoption (never creates); `false` on doubt. */
  attach(ptyId: string, owner: PtySlotOwner): Promise<boolean>
  /** Mark the tracked PTY as the slot's, so its exit retires the binding. */
  bindSlot(ptyId: string, slot: PtySlot): void
}

function matchesOwner(reply: PtySpawnReply, owner: PtySlotOwner): boolean {
  return reply.hostId === owner.hostId && (owner.incarnationId === undefined || reply.incarnationId === owner.incarnationId)
}

/**
 * Adopt the slot's live owner without spawning: the store's owner (live and persisted views must
 * agree), from the controller's own records or, when it does not track it, by an attach-only call
 * to the owner's provider (`materialized`). `null` when the slot has no owner, or its owner is not
 * live (the binding is left to the next slot spawn, which proves absence before retiring it).
 *
 * @throws PtySpawnError `slot_owner_conflict` when the live and persisted views name different owners.
 * @throws PtySpawnError `slot_owner_unverified` when the store answers neither an owner nor none.
 */
export async function adoptSlotOwner(host: SlotAdoptionHost, slot: PtySlot): Promise<PtySlotAdoption | null> {
  const views = await readSlotOwnerViews(host.store, slot)
  if (views.kind === 'conflict') {
    const { live, persisted } = views
    throw new PtySpawnError(
      'slot_owner_conflict',
      describeSlotOwnerConflict(slot, live, persisted),
      { outcome: 'not_started' },
    )
  }
  const owner = views.owner
  if (owner === null) return null
  const tracked = host.liveReply(owner.ptyId)
  if (tracked !== null) {
    if (!matchesOwner(tracked, owner)) return null
    host.bindSlot(owner.ptyId, slot)
    return { result: { ...tracked, isReattach: true }, owner }
  }
  if (!(await host.attach(owner.ptyId, owner))) return null
  const attached = host.liveReply(owner.ptyId)
  if (attached === null || !matchesOwner(attached, owner)) return null
  host.bindSlot(owner.ptyId, slot)
  return { result: { ...attached, isReattach: true }, owner, materialized: true }
}
