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

  it('every markdown page the package ships links only to files the package ships (read in node_modules, a link must resolve there)', () => {
    // The file list `npm pack` would publish (no build: `files` decides, not dist/'s state).
    const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' })) as { files: { path: string }[] }[]
    const shipped = new Set(packed[0]!.files.map((file) => file.path))
    const shippedPages = [...shipped].filter((file) => file.endsWith('.md'))
    expect(shippedPages).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/getting-started.md']))
    const links = shippedPages.flatMap((page) =>
      relativeLinks(fs.readFileSync(path.join(root, page), 'utf8')).map((target) => ({ page, target: path.posix.normalize(path.posix.join(path.posix.dirname(page), target)) })),
    )
    // The README alone links to most guides: the check sees them.
    expect(links.filter((link) => link.page === 'README.md' && link.target.startsWith('docs/')).length).toBeGreaterThan(5)
    // A directory resolves when the package ships a file under it.
    const resolves = (target: string) => shipped.has(target) || [...shipped].some((file) => file.startsWith(`${target.replace(/\/$/, '')}/`))
    expect(links.filter((link) => !resolves(link.target)).map((link) => `${link.page} -> ${link.target}`)).toEqual([])
  })
})
