// zerocode's build configuration. It belongs to the platform, not to the app: whatever
// vite.config.js the app's workspace holds is replaced by this file before every build
// (docs/security.md). It keeps every import inside the project and makes an app import only
// the allowed packages it declares in package.json.
import { defineConfig } from 'vite'
import vue from '@vitejs/plugin-vue'
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import path from 'node:path'

const root = realpathSync(process.cwd())
const modules = existsSync(path.join(root, 'node_modules'))
  ? realpathSync(path.join(root, 'node_modules')) : path.join(root, 'node_modules')
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
const declared = new Set(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }))

function within(dir, file) {
  return file === dir || file.startsWith(dir + path.sep)
}

function real(file) {
  try { return realpathSync(file) } catch { return path.resolve(file) }
}

function shown(file) {
  return file && within(root, file) ? path.relative(root, file) : file
}

function packageOf(source) {
  const parts = source.split('/')
  return source.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}

const BARE = /^(?![./\\]|[a-zA-Z]:|\0|virtual:|data:|https?:)[^?#]/

// Everything an app's code imports must lie inside the project (or be an allowed package):
// '/proc/self/environ?raw', an absolute host path or '../../x' fails the build here.
function confine() {
  const refuse = (ctx, what, importer) => ctx.error(
    `zerocode: ${importer ? shown(importer) + ' imports' : 'the build reads'} ${what}, which ` +
    'is outside the project. Only files inside the project can be imported.')
  const check = (ctx, id, source, importer) => {
    if (!id || id.startsWith('\0') || !path.isAbsolute(id)) return
    const file = id.split('?')[0].split('#')[0]
    const found = real(file)
    if (!(within(root, found) || within(modules, found))) refuse(ctx, source || file, importer)
  }
  return {
    name: 'zerocode:confine',
    enforce: 'pre',
    async resolveId(source, importer, options) {
      if (source.startsWith('\0')) return null
      const fromApp = importer && !importer.startsWith('\0')
        && within(root, real(importer.split('?')[0])) && !within(modules, real(importer.split('?')[0]))
        && !importer.split('?')[0].includes(`${path.sep}node_modules${path.sep}`)
      if (fromApp && BARE.test(source) && !declared.has(packageOf(source))) {
        this.error(`zerocode: ${shown(importer)} imports '${source}', but package.json does ` +
          `not declare '${packageOf(source)}'. Add it to dependencies (allowed packages only).`)
      }
      const bare = source.split('?')[0].split('#')[0]
      if (fromApp && (bare.startsWith('.') || bare.startsWith('/'))) {
        const base = bare.startsWith('/') ? root : path.dirname(real(importer.split('?')[0]))
        const target = within(root, bare) ? bare : path.resolve(base, '.' + path.sep + bare)
        const inPublic = bare.startsWith('/') && existsSync(path.join(root, 'public', bare))
        if (!within(root, target) || (bare.startsWith('/') && !existsSync(target) && !inPublic)) {
          refuse(this, source, importer)
        }
      }
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true })
      if (resolved && !resolved.external) check(this, resolved.id, source, importer)
      return resolved
    },
    load(id) {
      check(this, id, null, null)
      return null
    },
  }
}

export default defineConfig({
  base: './',
  plugins: [confine(), vue()],
  logLevel: 'warn',
  clearScreen: false,
  build: { outDir: 'dist', emptyOutDir: true, reportCompressedSize: false },
})
