import { describe, expect, it } from 'vitest'
import { mintUuid } from '../../src/node-pty/mint-uuid.js'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('mintUuid', () => {
  it('mints random version 4 UUIDs in crypto.randomUUID() format, none twice, across entropy batches', () => {
    const seen = new Set<string>()
    // 1 000 spans several batches of 128.
    for (let i = 0; i < 1_000; i++) {
      const uuid = mintUuid()
      expect(uuid).toMatch(UUID_V4)
      seen.add(uuid)
    }
    expect(seen.size).toBe(1_000)
  })
})
