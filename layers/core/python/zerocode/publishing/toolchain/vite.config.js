// zerocode's build configuration. It belongs to the platform, not to the app: whatever
// vite.config.js the app's workspace holds is replaced by this file before every build
// (docs/security.md). It declares everything Vite would otherwise look up in the project
// (PostCSS, .env files, TypeScript settings), so no file of the app's runs or is read as
// configuration; it keeps every file the build reads inside the project; and it makes an
// app import only the allowed packages it declares in package.json.
import { defineConfig } from 'vite'
import vue from '@vitejs/plugin-vue'
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import fsp from 'node:fs/promises'
import { syncBuiltinESMExports } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = realpathSync(process.cwd())
const modules = existsSync(path.join(root, 'node_modules'))
  ? realpathSync(path.join(root, 'node_modules')) : path.join(root, 'node_modules')
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
const declared = new Set(Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }))
// The platform's TypeScript settings, written by the platform into every build tree
// (toolchain.build_tree): a tsconfig.json of the app's is never looked for.
const TSCONFIG = '.zerocode/tsconfig.json'
// No variable of the build's environment or of a .env file reaches import.meta.env: nothing
// has this prefix (Vite refuses an empty one).
const ENV_PREFIX = '__ZEROCODE_NO_ENV__'

function within(dir, file) {
  return file === dir || file.startsWith(dir + path.sep)
}

function real(file) {
  try { return realpathSync(file) } catch { return path.resolve(file) }
}

function shown(file) {
  return file && within(root, file) ? path.relative(root, file) : file
}

function inside(file) {
  const found = real(path.resolve(root, file))
  return within(root, found) || within(modules, found)
}

function packageOf(source) {
  const parts = source.split('/')
  return source.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}

const PLATFORM_CLIENT = '/_api/client.js'
const BARE = /^(?![./\\]|[a-zA-Z]:|\0|virtual:|data:|https?:)[^?#]/

function outsideMessage(what, importer) {
  return `zerocode: ${importer ? shown(importer) + ' imports' : 'the build reads'} ${what}, ` +
    'which is outside the project. Only files inside the project can be imported or referred ' +
    'to (imports, new URL(..., import.meta.url), index.html, CSS url() and @import).'
}

// Vite reads some files itself, with fs, rather than through resolveId/load: the target of
// new URL('...', import.meta.url), <img src>/<link href> in index.html, CSS url() and
// @import. Every such read of a file outside the project (and the toolchain) is refused
// here, before its content can be inlined or emitted, and remembered: some of Vite's callers
// swallow the error, so the build is failed at generateBundle all the same.
const strays = []
function guardReads() {
  const readFile = fsp.readFile
  fsp.readFile = function (file, ...rest) {
    let name = null
    if (typeof file === 'string') name = file
    else if (Buffer.isBuffer(file)) name = file.toString()
    else if (file instanceof URL && file.protocol === 'file:') name = fileURLToPath(file)
    if (name !== null && !inside(name)) {
      strays.push(path.resolve(root, name))
      return Promise.reject(Object.assign(new Error(outsideMessage(path.resolve(root, name))),
        { code: 'EACCES' }))
    }
    return readFile.call(this, file, ...rest)
  }
  syncBuiltinESMExports()
}
guardReads()

// Everything an app's code imports must lie inside the project (or be an allowed package):
// '/proc/self/environ?raw', an absolute host path or '../../x' fails the build here.
function confine() {
  const refuse = (ctx, what, importer) => ctx.error(outsideMessage(what, importer))
  const check = (ctx, id, source, importer) => {
    if (!id || id.startsWith('\0') || !path.isAbsolute(id)) return
    const file = id.split('?')[0].split('#')[0]
    if (!inside(file)) refuse(ctx, source || file, importer)
    const found = real(file)
    if (!within(modules, found) && path.relative(root, found).split(path.sep).includes('node_modules')) {
      ctx.error(`zerocode: ${importer ? shown(importer) + ' imports' : 'the build reads'} ` +
        `${shown(found)}, a node_modules directory inside the project. Packages come only from ` +
        'the platform\'s toolchain (allowed packages declared in package.json).')
    }
  }
  return {
    name: 'zerocode:confine',
    enforce: 'pre',
    async resolveId(source, importer, options) {
      if (source.startsWith('\0')) return null
      // The platform's data client (docs/data.md): served on the app's own origin, never a
      // file of the project, so it stays an import the browser makes.
      if (source === PLATFORM_CLIENT) return { id: source, external: true }
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
    // The last word: every module of every chunk and the source of every emitted asset lies
    // inside the project or the toolchain, and no read outside was attempted on the way.
    generateBundle: {
      order: 'post',
      handler(_options, bundle) {
        if (strays.length) refuse(this, strays[0], null)
        for (const output of Object.values(bundle)) {
          const sources = output.type === 'asset'
            ? [...(output.originalFileNames ?? [])]
            : [...(output.moduleIds ?? []), output.facadeModuleId]
          for (const source of sources) {
            if (!source || source.startsWith('\0')) continue
            const file = source.split('?')[0].split('#')[0]
            if (output.type === 'chunk' && !path.isAbsolute(file)) continue  // a virtual module
            if (!inside(file)) refuse(this, path.resolve(root, file), null)
          }
        }
      },
    },
  }
}

export default defineConfig({
  base: './',
  plugins: [confine(), vue()],
  // A worker is bundled by a build of its own, which runs none of the plugins above unless
  // named here: without this, a worker could import '../../x.js' from outside the project.
  worker: { plugins: () => [confine()] },
  // No logLevel: a downloaded project's `npm run dev` prints its URL and `npm run build` the
  // files it wrote. The platform's own builds pass `--logLevel warn` (toolchain.VITE_ARGS).
  clearScreen: false,
  publicDir: 'public',
  // Nothing below is looked up in the project: .env files are not read and no variable is
  // exposed; TypeScript settings are the platform's file; PostCSS is configured inline (an
  // object, so postcss-load-config never searches for postcss.config.js, .postcssrc or a
  // "postcss" field), with no plugins; tsconfig paths are not used for resolution.
  envDir: false,
  envPrefix: ENV_PREFIX,
  tsconfig: TSCONFIG,
  resolve: { tsconfigPaths: false },
  css: { transformer: 'postcss', postcss: { plugins: [] } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    reportCompressedSize: false,
    cssMinify: 'lightningcss',
    target: 'baseline-widely-available',
  },
})
