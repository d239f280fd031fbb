// zerocode's runner for a prepared build box (zerocode/adapters/local/sandbox.py). It belongs
// to the platform and is mounted read-only into the box. It starts before any file of an app
// is in /build (the box's work directory holds only the toolchain's mount point): it turns on
// Node's compile cache (NODE_COMPILE_CACHE, made once when the toolchain was installed and
// read-only here), loads Vite, the Vue plugin and Vue's SFC compiler from the toolchain, and
// waits for one line on stdin. The platform writes the build tree, then that line; only then
// does this run `vite build --configLoader native --logLevel warn` exactly as the CLI does
// (the same bin, the same arguments, the platform's vite.config.js resolved from /build as in
// a cold build). A box runs at most one build: after it, the process ends and the box is gone.
import fs from 'node:fs'
import module, { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'

module.enableCompileCache?.()
const MODULES = '/build/node_modules/'
const load = (file) => import(pathToFileURL(MODULES + file).href)

// Only a head start: whatever fails to load here is loaded (and reported) by the build.
try {
  await load('vite/dist/node/index.js')
  await load('@vitejs/plugin-vue/dist/index.mjs')
  // @vitejs/plugin-vue requires it from the project at config time: the same file, the same
  // CommonJS cache entry. Named by its path, so nothing looks up /build's package.json (not
  // there yet) before the build.
  createRequire(import.meta.url)(MODULES + 'vue/compiler-sfc/index.js')
} catch {}

// Waits on the event loop (epoll), never by polling: the box's stdin is a non-blocking pipe
// here (O_NONBLOCK in /proc/PID/fdinfo/0), and a read loop retrying EAGAIN spun a core for as
// long as the box waited, up to its bound (120 s). stdin is let go once the line is read.
function waitForGo() {
  return new Promise((resolve) => {
    const stdin = process.stdin
    let line = ''
    const done = (said) => {
      stdin.removeAllListeners('data')
      stdin.destroy()
      resolve(said)
    }
    stdin.on('data', (chunk) => {
      line += chunk.toString('latin1')
      if (line.includes('\n')) done(line.slice(0, line.indexOf('\n')))
    })
    stdin.once('end', () => done(line))
    stdin.once('error', () => done(''))
  })
}

if ((await waitForGo()) !== 'go') {
  // The platform discarded this box unused (or its server is gone): nothing to build.
  process.exit(125)
}
const bin = MODULES + 'vite/bin/vite.js'
process.argv = [process.argv[0], bin, 'build', '--configLoader', 'native', '--logLevel', 'warn']
await import(pathToFileURL(bin).href)
