import { isAscii } from 'node:buffer'
import type { PtyProviderBufferSnapshot } from '../contracts/index.js'
import type { HeadlessScreenFactory } from './headless-screen.js'
import { ScreenCursor, type ScreenRing, type ScreenScheduler } from './screen-cursor.js'
import { Utf8PieceCutter, type Utf8Piece } from './utf8-pieces.js'

/** How many raw output chars a session keeps for replay by default (1 Mi chars). */
export const PTY_HOST_DEFAULT_HISTORY_CHARS = 1024 * 1024

/** Scrollback rows the headless screen keeps by default. */
export const PTY_HOST_DEFAULT_SCROLLBACK_ROWS = 1_000

/**
 * What each piece the ring keeps costs besides its bytes: the `Buffer` and its `ArrayBuffer`
 * (heap objects, and the backing store's own allocation) and the piece object. Measured ~580 bytes
 * of RSS a piece (200 000 pieces of 2 bytes).
 */
export const RING_PIECE_OVERHEAD_BYTES = 512

/**
 * Reads of at most this many bytes are copied into the ring's open chunk ({@link RING_CHUNK_BYTES})
 * rather than kept as they came. Why: each piece costs ~{@link RING_PIECE_OVERHEAD_BYTES} besides
 * its bytes, and an interactive program's output comes in reads of a few bytes (an echo, a
 * spinner, a progress line): a ring of 1 Mi chars of 16-byte reads held ~22 MB, of 2-byte reads
 * ~300 MB, for each live session. Larger reads (a flood's are 4 KiB) are kept as they came: their
 * overhead is small, and the hot path copies nothing.
 */
export const RING_SMALL_READ_BYTES = 1024

/** The size of the chunks small reads are copied into (a chunk closed before it is full is cut to what it holds). */
export const RING_CHUNK_BYTES = 8 * 1024

/** Compact the ring's chunk array once this many evicted slots lead it (and they are most of it). */
const COMPACT_AFTER_EVICTED_CHUNKS = 64

/** What a replay request gets: the output from `replayFrom` on, and how much had fallen out of the ring. */
export type HistoryReplay = {
  /** The absolute sequence the replayed data starts at. */
  replayFrom: number
  /** Chars between the asked sequence and `replayFrom` that are no longer kept (0 when none). */
  lostChars: number
  /** The retained output from `replayFrom` to the current sequence. */
  data: string
}

/**
 * A snapshot of a session's screen as the host answers it: the contract's fields, and how many
 * output chars the screen never parsed because the ring dropped them before it got to them.
 */
export type PtyHostBufferSnapshot = PtyProviderBufferSnapshot & {
  /**
   * Output chars the headless screen skipped since the spawn: a flood faster than the screen's
   * parse budget and longer than the history. `0`: the screen is exactly the whole stream's. Above
   * 0: it shows the last `historyChars` of output applied on the state before the skip.
   */
  skippedChars: number
}

/**
 * One session's history in the host: the absolute output sequence (chars produced so far), a
 * bounded ring of the latest output for replay, and a headless screen that parses the ring behind
 * the stream (a {@link ScreenCursor}, fed by the host's screen scheduler).
 *
 * The ring keeps the output as the UTF-8 bytes the PTY produced ({@link Utf8Piece}s: whole
 * characters, with their char counts), never as strings. Why: output the ring holds outlives
 * V8's young generation, and a string of it would be copied by every scavenge until promoted and
 * then collected by a full GC — the largest cost of a flood through the host. Bytes live outside
 * the JS heap. Strings are made only where one is read (a replay, the screen's parse budget).
 *
 * `appendRead` is the output hot path: it cuts the read into whole characters, keeps the piece (no
 * copy), evicts past the limit, and tells the cursor. Nothing is decoded or parsed there.
 */
export class SessionHistory implements ScreenRing {
  /** Absolute count of output chars produced so far. */
  seq = 0
  readonly #limitChars: number
  readonly #cutter = new Utf8PieceCutter()
  /** The retained pieces are `#pieces[#head…]`; the first one's first `#headSkip` chars are no longer retained. */
  #pieces: Utf8Piece[] = []
  #head = 0
  #headSkip = 0
  #retained = 0
  /** Bytes of the pieces the ring holds (a partly skipped head piece whole, the open chunk's capacity), and how many pieces. */
  #ringBytes = 0
  #ringPieces = 0
  /** The chunk small reads are being copied into: the ring's last piece, while open. */
  #open: { buffer: Buffer; used: number; piece: RingChunk } | null = null
  readonly #screen: ScreenCursor

  /**
   * Start a history for a screen of `cols` × `rows`, opened from `screens`, its background parsing
   * scheduled by `scheduler`. `isProducerHeld` (optional) says whether flow control has paused the
   * session's PTY now: the screen does not take such a pause for the program going idle.
   */
  constructor(
    screens: HeadlessScreenFactory,
    scheduler: ScreenScheduler,
    options: { cols: number; rows: number; limitChars: number; scrollbackRows: number; isProducerHeld?: () => boolean },
  ) {
    this.#limitChars = options.limitChars
    this.#screen = new ScreenCursor(this, screens({ cols: options.cols, rows: options.rows, scrollbackRows: options.scrollbackRows }), scheduler, options.isProducerHeld)
  }

  /** The most output chars the ring keeps. */
  get limitChars(): number {
    return this.#limitChars
  }

  /** The oldest sequence still kept. */
  get retainedFrom(): number {
    return this.seq - this.#retained
  }

  /** The session's screen: its parse position and skip count. */
  get screen(): ScreenCursor {
    return this.#screen
  }

  /**
   * Record a read of the PTY (bytes, as the PTY produced them). Returns the piece of whole
   * characters it completed and the new sequence (the end of that piece), or `null` when the read
   * only began a character (its bytes wait for the next read).
   */
  appendRead(read: Uint8Array): (Utf8Piece & { seq: number }) | null {
    const piece = this.#cutter.cut(read)
    return piece === null ? null : this.#append(piece)
  }

  /** The output ended: record the bytes of an unfinished last character (as a decoder ends them). */
  endOfOutput(): (Utf8Piece & { seq: number }) | null {
    const piece = this.#cutter.end()
    const appended = piece === null ? null : this.#append(piece)
    // Nothing more comes: the open chunk keeps only what it holds.
    this.#closeChunk()
    return appended
  }

  /**
   * Record output given as text (for tests and tools): its UTF-8 bytes as one read, through the
   * same cut as {@link appendRead}, so it lands after any bytes held back. Returns the new sequence.
   */
  append(text: string): number {
    if (text.length > 0) this.appendRead(Buffer.from(text, 'utf8'))
    return this.seq
  }

  #append(piece: Utf8Piece): Utf8Piece & { seq: number } {
    if (piece.bytes.length <= RING_SMALL_READ_BYTES) this.#copyIntoChunk(piece)
    else {
      this.#closeChunk()
      this.#pieces.push(piece)
      this.#ringBytes += piece.bytes.length
      this.#ringPieces += 1
    }
    this.seq += piece.chars
    this.#retained += piece.chars
    if (this.#retained > this.#limitChars) this.#evict()
    this.#screen.noteOutput()
    return { bytes: piece.bytes, chars: piece.chars, seq: this.seq }
  }

  /**
   * Copy a small read into the open chunk (the ring's last piece, which grows by it), opening one
   * when none is open or it has no room. The piece handed on to the clients is the read's own.
   */
  #copyIntoChunk(piece: Utf8Piece): void {
    let open = this.#open
    if (open === null || open.used + piece.bytes.length > open.buffer.length) {
      this.#closeChunk()
      // Not from Node's shared pool: a ring's chunk lives long, and a pooled slice keeps its whole slab.
      const buffer = Buffer.allocUnsafeSlow(RING_CHUNK_BYTES)
      const piece: RingChunk = { bytes: buffer.subarray(0, 0), chars: 0, readTo: undefined }
      open = { buffer, used: 0, piece }
      this.#open = open
      this.#pieces.push(open.piece)
      this.#ringBytes += RING_CHUNK_BYTES
      this.#ringPieces += 1
    }
    piece.bytes.copy(open.buffer, open.used)
    open.used += piece.bytes.length
    open.piece.bytes = open.buffer.subarray(0, open.used)
    open.piece.chars += piece.chars
  }

  /** Close the open chunk, if any: one closed before it is full is cut to what it holds. */
  #closeChunk(): void {
    const open = this.#open
    if (open === null) return
    this.#open = null
    if (open.used === open.buffer.length) return
    const exact = Buffer.allocUnsafeSlow(open.used)
    open.buffer.copy(exact, 0, 0, open.used)
    open.piece.bytes = exact
    this.#ringBytes -= open.buffer.length - open.used
  }

  /** Drop the oldest output until the ring holds at most the limit. */
  #evict(): void {
    const pieces = this.#pieces
    while (this.#retained - (pieces[this.#head]!.chars - this.#headSkip) >= this.#limitChars && this.#head < pieces.length - 1) {
      this.#retained -= pieces[this.#head]!.chars - this.#headSkip
      this.#ringBytes -= pieces[this.#head]!.bytes.length
      this.#ringPieces -= 1
      pieces[this.#head] = EVICTED
      this.#head += 1
      this.#headSkip = 0
    }
    if (this.#retained > this.#limitChars) {
      // Part of the oldest piece goes: it is kept whole, its dropped chars skipped on reads.
      const drop = this.#retained - this.#limitChars
      this.#headSkip += drop
      this.#retained -= drop
    }
    if (this.#head > COMPACT_AFTER_EVICTED_CHUNKS && this.#head * 2 > pieces.length) {
      this.#pieces = pieces.slice(this.#head)
      this.#head = 0
    }
  }

  /** The retained output from `fromSeq` (clamped to what is retained), at most `maxChars` of it. */
  read(fromSeq: number, maxChars: number): string {
    const pieces = this.#pieces
    let from = Math.max(fromSeq, this.retainedFrom)
    const end = Math.min(this.seq, from + maxChars)
    if (end <= from) return ''
    const parts: string[] = []
    // `start`: the sequence at which piece `index` begins (the head piece's skipped chars included).
    let start = this.retainedFrom - this.#headSkip
    for (let index = this.#head; index < pieces.length && start < end; index++) {
      const piece = pieces[index]!
      const pieceEnd = start + piece.chars
      if (pieceEnd > from) {
        parts.push(textOf(piece, from - start, Math.min(pieceEnd, end) - start))
        from = Math.min(pieceEnd, end)
      }
      start = pieceEnd
    }
    return parts.length === 1 ? parts[0]! : parts.join('')
  }

  /**
   * How many line feeds (LF, VT, FF: each moves xterm's cursor a line down) the retained output
   * from `fromSeq` on holds, counting whole pieces (the first one may start a little before
   * `fromSeq`) and stopping once `most` are counted. Reads the bytes as they are: these are single
   * bytes in UTF-8, never part of a longer character.
   */
  lineFeedsFrom(fromSeq: number, most: number): number {
    const pieces = this.#pieces
    let count = 0
    let end = this.seq
    for (let index = pieces.length - 1; index >= this.#head && end > fromSeq && count < most; index--) {
      const piece = pieces[index]!
      for (const feed of LINE_FEED_BYTES) {
        for (let at = piece.bytes.indexOf(feed); at !== -1 && count < most; at = piece.bytes.indexOf(feed, at + 1)) count += 1
      }
      end -= piece.chars
    }
    return Math.min(count, most)
  }

  /** The output from `fromSeq` on (`null`: everything retained), and what fell out of the ring. */
  replay(fromSeq: number | null): HistoryReplay {
    const retainedFrom = this.retainedFrom
    const asked = fromSeq === null ? retainedFrom : Math.min(fromSeq, this.seq)
    const replayFrom = Math.max(asked, retainedFrom)
    return { replayFrom, lostChars: replayFrom - asked, data: this.read(replayFrom, Infinity) }
  }

  /** Follow a resize of the PTY. */
  resize(cols: number, rows: number): void {
    this.#screen.resize(cols, rows)
  }

  /** Clear the screen's scrollback (the replay ring is kept: it is the raw stream). */
  clear(): void {
    this.#screen.clear()
  }

  /**
   * The screen at the current sequence: the screen parses everything the ring holds past its
   * cursor first, and serializes after that, so the snapshot is exactly the screen at `seq`.
   */
  async snapshot(scrollbackRows: number | undefined): Promise<PtyHostBufferSnapshot> {
    return (await this.snapshotAndRowsHeld(scrollbackRows)).snapshot
  }

  /** {@link SessionHistory.snapshot}, with how many scrollback rows it holds when the screen can tell. */
  async snapshotAndRowsHeld(scrollbackRows: number | undefined): Promise<{ snapshot: PtyHostBufferSnapshot; scrollbackRowsHeld: number | undefined }> {
    const screen = await this.#screen.snapshot(scrollbackRows)
    const snapshot: PtyHostBufferSnapshot = { data: screen.data, cols: screen.cols, rows: screen.rows, seq: screen.seq, source: 'headless', skippedChars: screen.skippedChars }
    if (screen.lastTitle !== undefined) snapshot.lastTitle = screen.lastTitle
    return { snapshot, scrollbackRowsHeld: screen.scrollbackRowsHeld }
  }

  /**
   * An estimate of the memory the history holds: the ring's bytes and pieces, and the screen (with
   * what the output it has not parsed yet may still add). What the pty host counts against its
   * budget for ended sessions (`exitedHistoryBytes`). 0 once disposed.
   */
  heldBytes(): number {
    return this.#ringBytes + this.#ringPieces * RING_PIECE_OVERHEAD_BYTES + this.#screen.heldBytes()
  }

  /** Release the headless terminal and the ring (`seq` stays: where the output ended). */
  dispose(): void {
    this.#screen.dispose()
    this.#pieces = []
    this.#head = 0
    this.#headSkip = 0
    this.#retained = 0
    this.#ringBytes = 0
    this.#ringPieces = 0
    this.#open = null
  }
}

/** The bytes xterm moves the cursor a line down for: LF, VT and FF. */
const LINE_FEED_BYTES = [0x0a, 0x0b, 0x0c] as const

/** The slot of an evicted piece (its bytes released). */
const EVICTED: Utf8Piece = { bytes: Buffer.alloc(0), chars: 0 }

/**
 * A chunk of small reads (see {@link RING_CHUNK_BYTES}): a piece, and where the last read of its
 * text ended (chars, and the byte they end at), when that is known to be a character boundary.
 */
type RingChunk = Utf8Piece & { readTo: { chars: number; bytes: number } | undefined }

/**
 * Chars `from` to `to` of `piece`, as text: a plain-ASCII piece is sliced as bytes, any other
 * decoded whole first — but a chunk read on from where its last read ended (the screen's cursor
 * does so, a few reads behind the ring's end) is decoded from that byte on: decoding a whole
 * chunk of non-ASCII text per screen feed cost ~20 µs.
 */
function textOf(piece: Utf8Piece | RingChunk, from: number, to: number): string {
  if (piece.chars === piece.bytes.length && isAscii(piece.bytes)) return piece.bytes.toString('latin1', from, to)
  if (!('readTo' in piece)) {
    const whole = piece.bytes.toString('utf8')
    return from === 0 && to === whole.length ? whole : whole.slice(from, to)
  }
  const mark = piece.readTo
  const base = mark !== undefined && mark.chars <= from ? mark : { chars: 0, bytes: 0 }
  const text = piece.bytes.toString('utf8', base.bytes)
  const read = text.slice(from - base.chars, to - base.chars)
  if (to === piece.chars) piece.readTo = { chars: to, bytes: piece.bytes.length }
  else {
    // Where this read ended, in bytes: exact when the text up to it re-encodes to the bytes it came
    // from (no U+FFFD, which stands for bytes that were not UTF-8) and no surrogate pair is cut.
    const upTo = text.slice(0, to - base.chars)
    const last = upTo.charCodeAt(upTo.length - 1)
    if (upTo.length > 0 && !(last >= 0xd800 && last <= 0xdbff) && !upTo.includes('\uFFFD')) {
      piece.readTo = { chars: to, bytes: base.bytes + Buffer.byteLength(upTo, 'utf8') }
    }
  }
  return read
}
