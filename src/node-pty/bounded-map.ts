/**
 * How many `/proc` reads of one pass (a process-table scan, a listing's details) may be in flight
 * at once. Each holds a file descriptor from its `open` to its `close`, and a pass used to issue
 * them all together: a table of 200 processes held 200 descriptors for a moment, so a host using
 * 60 % of its descriptor limit on PTYs ran out — its own spawns failed with EMFILE and the scan
 * lost rows. libuv's thread pool runs 4 file operations at a time, so 32 in flight keep it as busy
 * as before while bounding the descriptors a pass holds.
 */
export const NODE_PTY_PROC_READS_IN_FLIGHT = 32

/**
 * `Promise.all(items.map(each))` with at most `limit` calls of `each` pending at once; the results
 * in the order of `items`.
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, each: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++
      results[index] = await each(items[index] as T)
    }
  }
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker))
  return results
}
