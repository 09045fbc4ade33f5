import { expect } from './conformance-expect.js'
import type { ProviderSpawnOptions } from '../contracts/index.js'
import type { PtyProviderConformanceCheck, PtyProviderConformanceOptions } from './conformance-types.js'

// A misspelt spawn option given to a provider itself (capability `refusesMisspeltSpawnOptions`): the
// refusal `findMisspeltSpawnOption` / `assertNoMisspeltSpawnOption` give, as every bundled provider
// makes it — instead of a spawn that ignores the key and starts a process with the default.

/** A value no refusal may show or keep: given under a misspelt `env`. */
const SECRET = 'conformance-secret-value'

/** The misspelt keys the check gives, each with its value and the spawn option it likely means. */
const MISSPELT: ReadonlyArray<readonly [name: string, value: unknown, meant: string]> = [
  ['cdw', '/', 'cwd'],
  ['sessionID', 'conformance-session', 'sessionId'],
  ['col', 100, 'cols'],
  ['argv', ['-c', 'true'], 'args'],
  ['id', 'conformance-id', 'sessionId'],
  ['cmd', 'ls', 'file'],
  ['evn', { TOKEN: SECRET }, 'env'],
]

/** What `call` threw or rejected with, or `answered` when it resolved. */
async function refusalOf(call: () => Promise<unknown>): Promise<{ code?: unknown; option?: unknown; value?: unknown; message?: unknown } | 'answered'> {
  try {
    await call()
    return 'answered'
  } catch (error) {
    return (error ?? {}) as { code?: unknown; option?: unknown; value?: unknown; message?: unknown }
  }
}

/** The check of a provider's refusal of a misspelt spawn option (capability `refusesMisspeltSpawnOptions`; see `ptyProviderConformanceChecks`). */
export function spawnOptionConformanceChecks(options: PtyProviderConformanceOptions): readonly PtyProviderConformanceCheck[] {
  if (options.capabilities?.refusesMisspeltSpawnOptions !== true) return []
  return [
    {
      name: `refuses a misspelt spawn option (${MISSPELT.map(([name]) => `\`${name}\``).join(', ')}) with \`invalid_spawn_option\` naming it and the option meant, a misspelt \`env\`'s value neither shown nor kept, and starts nothing`,
      async run(h) {
        // A spawn as given first, so that a provider that connects (or starts its host) on its first
        // spawn can list; then what it lists (with a daemon's or a shared host's other PTYs), to
        // which a refused spawn must add nothing.
        await h.spawn(options.spawnLongRunning())
        const listedBefore = (await h.provider.listProcesses()).map((row) => row.id).sort()
        for (const [name, value, meant] of MISSPELT) {
          const spawnOptions = { ...options.spawnLongRunning(), [name]: value } as ProviderSpawnOptions
          const refusal = await refusalOf(() => h.spawn(spawnOptions))
          expect(refusal === 'answered' ? 'answered' : refusal.code, `the code of the refusal of a spawn with \`${name}\` (a misspelt \`${meant}\`, which would be ignored)`).toBe('invalid_spawn_option')
          const error = refusal as { option?: unknown; value?: unknown; message?: unknown }
          expect(error.option, `the \`option\` of the refusal of a spawn with \`${name}\``).toBe(name)
          expect(String(error.message), `the message of the refusal of a spawn with \`${name}\` names it`).toContain(`\`${name}\``)
          expect(String(error.message), `the message of the refusal of a spawn with \`${name}\` names the option meant`).toContain(`\`${meant}\``)
          if (meant === 'env') {
            // An environment value may be a token: it ends up in logs with the message, and stays on the error.
            expect(String(error.message).includes(SECRET), `the message of the refusal of a spawn with \`${name}\` (a misspelt \`env\`) shows no value of it`).toBe(false)
            expect(error.value, `the \`value\` of the refusal of a spawn with \`${name}\` (a misspelt \`env\`)`).toBeUndefined()
          } else {
            expect(error.value, `the \`value\` of the refusal of a spawn with \`${name}\``).toEqual(value)
          }
        }
        // Nothing was started by the refused spawns: a listing holds every live PTY.
        const listedAfter = (await h.provider.listProcesses()).map((row) => row.id).sort()
        expect(listedAfter, 'the PTY ids listed after spawns refused for a misspelt option (none started)').toEqual(listedBefore)
      },
    },
  ]
}
