// check.mjs renders every ```mermaid block of tenon's Markdown files with @mermaid-js/mermaid-cli
// (Mermaid's own parser and renderer, in a headless Chromium) and fails naming the file and line
// of each block that does not render.
//
// Usage: node check.mjs <node_modules dir> <chromium binary> <repository root>
// The Makefile's mermaid-check target supplies the arguments.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { pathToFileURL } from 'node:url'

const [modules, chromium, root] = process.argv.slice(2)
if (!modules || !chromium || !root) {
  console.error('usage: node check.mjs <node_modules> <chromium> <root>')
  process.exit(2)
}

// The files the guides are made of: docs/, the README and the examples' READMEs.
function markdownFiles () {
  const files = []
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name)
      if (statSync(p).isDirectory()) {
        if (name !== 'node_modules' && name !== 'bin') walk(p)
      } else if (name.endsWith('.md')) {
        files.push(p)
      }
    }
  }
  walk(join(root, 'docs'))
  files.push(join(root, 'README.md'))
  for (const name of readdirSync(join(root, 'examples'))) {
    const p = join(root, 'examples', name, 'README.md')
    try { statSync(p); files.push(p) } catch {}
  }
  return files.sort()
}

// blocks returns the mermaid fences of one file with the line of their opening fence.
function blocks (file) {
  const lines = readFileSync(file, 'utf8').split('\n')
  const out = []
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```mermaid') continue
    const start = i + 1
    const body = []
    for (i++; i < lines.length && lines[i].trim() !== '```'; i++) body.push(lines[i])
    if (i === lines.length) throw new Error(`${file}:${start}: unterminated mermaid block`)
    out.push({ line: start, text: body.join('\n') })
  }
  return out
}

const { renderMermaid } = await import(pathToFileURL(join(modules, '@mermaid-js/mermaid-cli/src/index.js')))
const puppeteer = (await import(pathToFileURL(join(modules, 'puppeteer/lib/esm/puppeteer/puppeteer.js')))).default
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage']
})
let failed = 0
let count = 0
try {
  for (const file of markdownFiles()) {
    for (const b of blocks(file)) {
      count++
      try {
        await renderMermaid(browser, b.text, 'svg', { mermaidConfig: { securityLevel: 'strict' } })
      } catch (err) {
        failed++
        const msg = String(err && err.message ? err.message : err).split('\n').slice(0, 6).join('\n  ')
        console.error(`${relative(root, file)}:${b.line}: mermaid block does not render:\n  ${msg}`)
      }
    }
  }
} finally {
  await browser.close()
}
if (failed > 0) {
  console.error(`mermaid: ${failed} of ${count} diagrams do not render`)
  process.exit(1)
}
console.log(`mermaid: rendered ${count} diagrams`)
