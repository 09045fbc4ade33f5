// `ptykit/testing/fake` is the fake provider for suites without vitest and fast-check; `ptykit/testing`
// keeps exporting all of it, unchanged, for the suites that import it from there.
// (scripts/check-packed-consumer.mjs runs it from the packed tarball with neither peer installed.)
import { expect, it } from 'vitest'
import * as testing from 'ptykit/testing'
import * as fake from 'ptykit/testing/fake'

it('ptykit/testing exports every name of ptykit/testing/fake, as the same value', () => {
  const names = Object.keys(fake)
  expect(names).toEqual(expect.arrayContaining(['createFakePtyProvider', 'createManualClock', 'FakePtyAbsentError', 'isFakePtyAbsentError']))
  for (const name of names) expect(testing[name as keyof typeof testing], name).toBe(fake[name as keyof typeof fake])
})

it('ptykit/testing/fake leaves out what needs fast-check or vitest', () => {
  expect(Object.keys(fake).filter((name) => /^arbitrary|Conformance/i.test(name))).toEqual([])
})
