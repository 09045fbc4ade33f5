import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const root = path.resolve(__dirname, '../..')
const pages = ['README.md', 'CHANGELOG.md', ...fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]

/** Relative link targets of a markdown page (code blocks excluded), without their #fragment. */
function relativeLinks(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '')
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith('#'))
    .map((target) => target.split('#')[0]!)
}

describe('documentation links', () => {
  it('finds the links it checks (so the check below cannot pass vacuously)', () => {
    const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
    expect(relativeLinks(readme)).toContain('docs/getting-started.md')
    expect(relativeLinks('[a](x.md#y) [b](https://e.org) [c](#z) ```\n[d](code.md)\n```')).toEqual(['x.md'])
  })

  it.each(pages)('%s links only to files that exist (the generated API reference excepted)', (page) => {
    const text = fs.readFileSync(path.join(root, page), 'utf8')
    const broken = relativeLinks(text).filter((target) => {
      const resolved = path.resolve(path.dirname(path.join(root, page)), target)
      // docs/api/ is built by `npm run docs` and not committed.
      if (resolved.startsWith(path.join(root, 'docs', 'api'))) return false
      return !fs.existsSync(resolved)
    })
    expect(broken).toEqual([])
  })

  it('the README links only to pages the published package ships (read on npm or in node_modules, the guides are there)', () => {
    // The file list `npm pack` would publish (no build: `files` decides, not dist/'s state).
    const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' })) as { files: { path: string }[] }[]
    const shipped = new Set(packed[0]!.files.map((file) => file.path))
    const readmeLinks = relativeLinks(fs.readFileSync(path.join(root, 'README.md'), 'utf8')).map((target) => path.posix.normalize(target))
    expect(readmeLinks.filter((target) => target.startsWith('docs/')).length).toBeGreaterThan(5)
    expect(readmeLinks.filter((target) => !shipped.has(target) && !target.startsWith('docs/api'))).toEqual([])
  })
})
