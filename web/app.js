// The zerocode console: a static single-page app that talks only to the public HTTP API.
// Hash routes: #/login #/register #/ (home) #/apps/{id} #/admin. No build step, no CDN.

const API = ((window.ZEROCODE_CONFIG && window.ZEROCODE_CONFIG.api) || "").replace(/\/+$/, "");
const view = document.getElementById("view");
const nav = document.getElementById("nav");
const toast = document.getElementById("toast");
let me = null;

// -- the API --------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, message, retryAfter) {
    super(message);
    this.status = status; this.code = code; this.retryAfter = retryAfter;
  }
}

function token() { return localStorage.getItem("zc_token"); }

function headers(extra = {}) {
  const h = { ...extra };
  if (token()) h.Authorization = `Bearer ${token()}`;
  return h;
}

async function failure(response) {
  let code = "http_error", message = response.statusText || `HTTP ${response.status}`;
  try {
    const body = await response.json();
    if (body && body.error) ({ code, message } = body.error);
  } catch (_) { /* not JSON */ }
  return new ApiError(response.status, code, message,
                      Number(response.headers.get("Retry-After") || 0));
}

async function api(method, path, body) {
  const init = { method, headers: headers(body ? { "Content-Type": "application/json" } : {}) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(API + path, init);
  if (!response.ok) throw await failure(response);
  return response.status === 204 ? null : response.json();
}

// What a person should read for an error: by the API's error code first (a 409 may be a
// running turn or a taken account name), then by the status.
const BY_CODE = {
  account_taken: (err) => `That account name is taken: choose another. (${err.message})`,
  invalid_credentials: () => "Wrong account or password.",
  rate_limited: (err) => `Too many requests: try again in ${err.retryAfter || 60} s.`,
};

function explain(err) {
  if (!(err instanceof ApiError)) return `Network problem: ${err.message}`;
  if (BY_CODE[err.code]) return BY_CODE[err.code](err);
  if (err.status === 429) return `Too many requests: try again in ${err.retryAfter || 60} s.`;
  if (err.status === 409) return `Busy: ${err.message}`;
  if (err.status === 413) return `Too large: ${err.message}`;
  if (err.status === 401) return "Please sign in again.";
  if (err.status === 403) return `Not allowed: ${err.message}`;
  if (err.status === 404) return "Not found.";
  if (err.status === 400 || err.status === 422) return `Please check your input: ${err.message}`;
  return `Something went wrong (${err.status}): ${err.message}`;
}

function notify(text, isError = false) {
  toast.textContent = text;
  toast.className = isError ? "error" : "";
  toast.hidden = false;
  clearTimeout(notify.timer);
  notify.timer = setTimeout(() => { toast.hidden = true; }, isError ? 8000 : 3000);
}

function clearToast() {
  clearTimeout(notify.timer);
  toast.hidden = true;
}

function report(err) {
  notify(explain(err), true);
  if (err instanceof ApiError && err.status === 401) signOut(false);
}

// -- small DOM helpers ------------------------------------------------------------------------

const MAX_CHARS = 1000;  // the API's message limit (ZEROCODE_MAX_MESSAGE_CHARS)

// "N / 1000" under a text field, warning near the limit.
function counter(field) {
  const out = h("div", { class: "counter", "aria-live": "polite" });
  const update = () => {
    const n = field.value.length;
    out.textContent = `${n} / ${MAX_CHARS}`;
    out.classList.toggle("near", n >= MAX_CHARS * 0.9);
  };
  field.addEventListener("input", update);
  update();
  out.update = update;
  return out;
}

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (value === true) el.setAttribute(key, "");
    else if (value !== false && value != null) el.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child != null) el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;",
                                            '"': "&quot;", "'": "&#39;" }[c]));
}

// Just enough markdown for replies: code fences, inline code, bold.
function markdown(text) {
  return escapeHtml(text).split(/```[\w-]*\n?/).map((part, i) => i % 2
    ? `<pre>${part}</pre>`
    : part.replace(/`([^`]+)`/g, "<code>$1</code>").replace(/\*\*([^*]+)\*\*/g, "<b>$1</b>"))
    .join("");
}

function when(seconds) { return new Date(seconds * 1000).toLocaleString(); }

// -- session --------------------------------------------------------------------------------

async function loadMe() {
  if (!token()) { me = null; return; }
  try { me = await api("GET", "/api/users/me"); } catch (err) {
    me = null;
    if (err instanceof ApiError && err.status === 401) localStorage.removeItem("zc_token");
  }
}

async function signOut(callApi = true) {
  if (callApi && token()) { try { await api("POST", "/api/users/logout"); } catch (_) { /* gone */ } }
  localStorage.removeItem("zc_token");
  me = null;
  location.hash = "#/login";
}

function renderNav() {
  nav.replaceChildren(...(me
    ? [h("a", { href: "#/" }, "My apps"),
       me.role === "admin" ? h("a", { href: "#/admin" }, "Admin") : null,
       h("span", { class: "small", id: "whoami" }, me.account),
       h("button", { class: "secondary", id: "logout", onclick: () => signOut() }, "Log out")]
    : [h("a", { href: "#/login" }, "Log in"), h("a", { href: "#/register" }, "Register")])
    .filter(Boolean));
}

function authForm(kind) {
  const account = h("input", { name: "account", placeholder: "account", autocomplete: "username" });
  const password = h("input", { name: "password", type: "password", placeholder: "password",
                                autocomplete: kind === "login" ? "current-password" : "new-password" });
  const submit = h("button", { type: "submit" }, kind === "login" ? "Log in" : "Create account");
  const form = h("form", { class: "card auth", onsubmit: async (e) => {
    e.preventDefault();
    submit.disabled = true;
    try {
      if (kind === "register") {
        await api("POST", "/api/users/register", { account: account.value, password: password.value });
      }
      const login = await api("POST", "/api/users/login", { account: account.value, password: password.value });
      localStorage.setItem("zc_token", login.token);
      me = login.user;
      location.hash = "#/";
    } catch (err) { report(err); } finally { submit.disabled = false; }
  } }, h("h2", {}, kind === "login" ? "Log in" : "Register"), account, password, submit,
     h("span", { class: "small" }, kind === "login"
       ? h("a", { href: "#/register" }, "No account yet? Register")
       : "Account: 4–64 letters, digits, . _ @ -; password: at least 8 characters."));
  view.replaceChildren(form);
  account.focus();
}

// -- home: create, my apps, featured ------------------------------------------------------------

function appTile(app) {
  return h("a", { class: "tile", href: `#/apps/${app.id}`, "data-app": app.id },
    app.cover ? h("img", { src: app.cover, alt: "" }) : h("div", { class: "cover" }, app.codeGenType),
    h("div", { class: "meta" }, h("div", { class: "name" }, app.name),
      h("div", { class: "small" }, `${app.codeGenType} · ${when(app.createdAt)}`)));
}

function appList(title, scope) {
  const grid = h("div", { class: "grid", id: `${scope}-apps` });
  const more = h("button", { class: "secondary", hidden: true }, "Load more");
  const search = h("input", { type: "search", placeholder: "Search by name", "aria-label": `search ${scope}` });
  let cursor = null;
  async function load(reset) {
    if (reset) { cursor = null; grid.replaceChildren(); }
    const params = new URLSearchParams({ scope, limit: "12" });
    if (cursor) params.set("cursor", cursor);
    if (search.value.trim()) params.set("q", search.value.trim());
    try {
      const page = await api("GET", `/api/apps?${params}`);
      grid.append(...page.apps.map(appTile));
      if (!grid.children.length) grid.append(h("p", { class: "small" }, "No apps yet."));
      cursor = page.nextCursor;
      more.hidden = !cursor;
    } catch (err) { report(err); }
  }
  let typing;
  search.addEventListener("input", () => { clearTimeout(typing); typing = setTimeout(() => load(true), 250); });
  more.addEventListener("click", () => load(false));
  load(true);
  return h("section", {}, h("div", { class: "row" }, h("h2", {}, title), search), grid, more);
}

function home() {
  const prompt = h("textarea", { placeholder: "Describe the app you want, e.g. “A Vue todo app with an about page”",
                                 "aria-label": "describe your app", maxlength: String(MAX_CHARS) });
  const mode = h("select", { "aria-label": "mode" },
    h("option", { value: "" }, "auto"), h("option", { value: "html" }, "single HTML page"),
    h("option", { value: "multi_file" }, "multi-file site"), h("option", { value: "vue_project" }, "Vue project"));
  const go = h("button", { type: "submit" }, "Create app");
  const form = h("form", { class: "card create", onsubmit: async (e) => {
    e.preventDefault();
    go.disabled = true;
    try {
      const body = { initPrompt: prompt.value };
      if (mode.value) body.codeGenType = mode.value;
      const app = await api("POST", "/api/apps", body);
      sessionStorage.setItem(`zc_start_${app.id}`, app.initPrompt);
      location.hash = `#/apps/${app.id}`;
    } catch (err) { report(err); } finally { go.disabled = false; }
  } }, h("h2", {}, "Create an app"), prompt, counter(prompt), h("div", { class: "row" }, mode, go));
  view.replaceChildren(form, appList("My apps", "mine"), appList("Featured", "featured"));
}

// -- the app page -------------------------------------------------------------------------------

function pickedElement(raw) {
  const field = (value, max) => (typeof value === "string" ? value.slice(0, max) : "");
  const el = raw && typeof raw === "object" ? raw : {};
  return { tag: field(el.tag, 40), selector: field(el.selector, 500), text: field(el.text, 500),
           pagePath: field(el.pagePath, 300) || "/" };
}

function parseFrames(buffer, onEvent) {
  // SSE: frames end with a blank line; comment lines (keep-alives) start with ":".
  let cut;
  while ((cut = buffer.indexOf("\n\n")) >= 0) {
    const frame = buffer.slice(0, cut);
    buffer = buffer.slice(cut + 2);
    let event = "message"; const data = [];
    for (const line of frame.split("\n")) {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    if (data.length) onEvent(event, JSON.parse(data.join("\n")));
  }
  return buffer;
}

async function appPage(appId) {
  let app;
  try { app = await api("GET", `/api/apps/${appId}`); } catch (err) {
    report(err);
    view.replaceChildren(h("p", {}, "This app does not exist or is not yours. ", h("a", { href: "#/" }, "Back")));
    return;
  }
  const messages = h("div", { class: "messages", id: "messages" });
  const input = h("textarea", { id: "message", placeholder: "Ask for a change…", maxlength: String(MAX_CHARS),
                                "aria-label": "message" });
  const inputCount = counter(input);
  const send = h("button", { id: "send" }, "Send");
  const chipSlot = h("div", { class: "row", id: "chips" });
  // The preview is another origin, and sandboxed without allow-same-origin on top: its
  // scripts run with an opaque origin, so it can reach neither its own origin's storage nor
  // this page. The frame's name tells the picker which origin may command it (picker.js).
  const frame = h("iframe", { id: "preview", title: "preview", src: app.previewUrl,
                              name: `zerocode-console ${location.origin}`,
                              sandbox: "allow-scripts allow-forms" });
  const editButton = h("button", { class: "secondary", id: "edit" }, "Edit mode");
  const deployButton = h("button", { id: "deploy" }, "Deploy");
  const panel = h("div", { class: "panel", id: "panel", hidden: true });
  let picked = null, editing = false, running = false, before = null, loadingOlder = false;

  function setEditing(on) {
    editing = on;
    editButton.classList.toggle("edit-on", on);
    editButton.textContent = on ? "Edit mode: on" : "Edit mode";
    // An opaque origin cannot be named as the target: "*" it is, and the message says only
    // "edit on/off". The picker obeys it only because it comes from this origin.
    frame.contentWindow && frame.contentWindow.postMessage({ zerocode: "edit", on }, "*");
  }
  function showChip() {
    chipSlot.replaceChildren(picked ? h("span", { class: "chip", id: "picked" },
      `<${picked.tag}> ${picked.text.slice(0, 40)}`,
      h("button", { title: "remove", "aria-label": "remove selection",
                    onclick: () => { picked = null; showChip(); } }, "×")) : "");
  }
  // Only the preview frame's window, whose sandboxed (opaque) origin reads "null", may talk
  // to this page; what it says is untrusted input, kept to the fields and sizes the API takes.
  window.onmessage = (e) => {
    if (e.source !== frame.contentWindow || e.origin !== "null" || !e.data) return;
    if (e.data.zerocode === "ready" && editing) setEditing(true);
    if (e.data.zerocode === "picked" && editing) { picked = pickedElement(e.data.element); showChip(); input.focus(); }
  };
  editButton.addEventListener("click", () => setEditing(!editing));

  function bubble(role, text, status) {
    const body = h("div");
    body.innerHTML = role === "user" ? escapeHtml(text) : markdown(text);
    const el = h("div", { class: `msg ${role === "user" ? "user" : "ai"}` }, body);
    if (status && status !== "ok") el.append(h("span", { class: `status ${status}` }, status));
    return el;
  }

  async function loadHistory(older) {
    if (loadingOlder || (older && !before)) return;
    loadingOlder = true;
    const params = new URLSearchParams({ limit: "20" });
    if (older) params.set("before", before);
    try {
      const page = await api("GET", `/api/apps/${appId}/history?${params}`);
      const height = messages.scrollHeight;
      messages.prepend(...page.entries.slice().reverse().map((e) => bubble(e.role, e.content, e.status)));
      before = page.nextCursor;
      if (older) messages.scrollTop = messages.scrollHeight - height;
      else messages.scrollTop = messages.scrollHeight;
      return page.entries.length;
    } catch (err) { report(err); return 0; } finally { loadingOlder = false; }
  }
  messages.addEventListener("scroll", () => { if (messages.scrollTop < 40) loadHistory(true); });

  async function chat(text) {
    if (running || !text.trim()) return;
    running = true; send.disabled = true;
    const body = { message: text };
    if (picked) body.element = picked;
    messages.append(bubble("user", text));
    const answer = h("div"); const steps = h("ul", { class: "steps" });
    const thinking = h("details", { class: "thinking", hidden: "" }, h("summary", {}, "thinking…"), h("pre"));
    const reply = h("div", { class: "msg ai", "data-turn": "running" }, thinking, answer, steps);
    messages.append(reply);
    messages.scrollTop = messages.scrollHeight;
    let text_ = "", buildLine = null;
    const tools = new Map();
    try {
      const response = await fetch(`${API}/api/apps/${appId}/chat`, {
        method: "POST", body: JSON.stringify(body),
        headers: headers({ "Content-Type": "application/json" }) });
      if (!response.ok) throw await failure(response);
      input.value = ""; inputCount.update(); picked = null; showChip();
      const reader = response.body.getReader(); const decoder = new TextDecoder();
      let buffer = "", done = null;
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        buffer = parseFrames(buffer + decoder.decode(chunk.value, { stream: true }), (event, data) => {
          if (event === "message") { text_ += data.d; answer.innerHTML = markdown(text_); }
          else if (event === "thinking") { thinking.hidden = false; thinking.lastChild.textContent += data.text; }
          else if (event === "tool") {
            let item = tools.get(data.id);
            if (!item) { item = h("li", { class: "running" }); tools.set(data.id, item); steps.append(item); }
            item.className = data.phase === "call" ? "running" : (data.ok ? "ok" : "failed");
            item.textContent = `${data.name}${data.path ? " " + data.path : ""}` +
              (data.phase === "result" && !data.ok ? ` — ${data.summary}` : "");
          } else if (event === "build") {
            if (!buildLine) { buildLine = h("li"); steps.append(buildLine); }
            buildLine.className = data.status === "running" ? "running" : (data.status === "succeeded" ? "ok" : "failed");
            buildLine.textContent = `preview build ${data.status}` + (data.status === "failed" && (data.error || data.log_tail) ? ` — ${data.error || data.log_tail.split("\n").slice(-3).join(" ")}` : "");
          } else if (event === "repair") {
            steps.append(h("li", { class: "repair" }, `repair ${data.attempt}/${data.max}: ${data.reason}`));
            buildLine = null;  // the repaired code gets a build line of its own
          } else if (event === "error") {
            steps.append(h("li", { class: "failed" }, data.message));
          } else if (event === "done") { done = data; }
          messages.scrollTop = messages.scrollHeight;
        });
      }
      const status = done ? done.status : "interrupted";
      reply.dataset.turn = status;
      reply.append(h("span", { class: `status ${status}` }, status === "succeeded" ? "done" : status));
      frame.src = `${app.previewUrl}?t=${Date.now()}`;  // the preview reloads after every turn
    } catch (err) {
      reply.dataset.turn = "failed";
      reply.append(h("span", { class: "status failed" }, "not sent"));
      report(err);
    } finally { running = false; send.disabled = false; }
  }
  send.addEventListener("click", () => chat(input.value));
  input.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) chat(input.value); });

  async function deploy() {
    deployButton.disabled = true;
    panel.hidden = false;
    panel.replaceChildren(h("p", { id: "deploy-status" }, "Building…"));
    try {
      const started = await api("POST", `/api/apps/${appId}/deploy`);
      let build;
      for (;;) {
        build = await api("GET", `/api/apps/${appId}/builds/${started.buildId}`);
        if (build.state === "succeeded" || build.state === "failed") break;
        panel.querySelector("#deploy-status").textContent = `Build ${build.state}…`;
        await new Promise((r) => setTimeout(r, 1000));
      }
      app = await api("GET", `/api/apps/${appId}`);
      await showBuilds(build);
    } catch (err) { report(err); panel.hidden = true; } finally { deployButton.disabled = false; }
  }
  async function showBuilds(latest) {
    const list = await api("GET", `/api/apps/${appId}/builds?purpose=deploy&limit=20`);
    const rows = list.builds.map((b) => h("tr", { "data-build": b.id },
      h("td", {}, when(b.createdAt)), h("td", {}, b.state + (b.published ? " · live" : "")),
      h("td", {}, b.error ? h("pre", {}, `${b.error}\n${b.logTail}`) : `${(b.seconds || 0).toFixed(1)} s`),
      h("td", {}, b.state === "succeeded" && !b.published
        ? h("button", { class: "secondary rollback", onclick: () => rollback(b.id) }, "Roll back to this") : "")));
    const head = [];
    if (latest && latest.state === "failed") head.push(h("p", { class: "status failed", id: "deploy-status" }, "Build failed: the site was not changed"));
    if (app.deployUrl) {
      head.push(h("div", { class: "row" }, h("a", { href: app.deployUrl, target: "_blank", rel: "noopener", id: "deploy-url" }, app.deployUrl),
        h("button", { class: "secondary", onclick: async () => { await navigator.clipboard.writeText(app.deployUrl); notify("Copied"); } }, "Copy"),
        h("button", { class: "secondary", onclick: () => window.open(app.deployUrl, "_blank", "noopener") }, "Open")));
    }
    panel.replaceChildren(...head, h("table", {}, h("tr", {}, h("th", {}, "build"), h("th", {}, "state"), h("th", {}, "time / reason"), h("th", {})), rows));
  }
  async function rollback(buildId) {
    try {
      app = await api("POST", `/api/apps/${appId}/rollback`, { buildId });
      notify("Rolled back");
      await showBuilds();
    } catch (err) { report(err); }
  }
  deployButton.addEventListener("click", deploy);

  async function download() {
    try {
      const response = await fetch(`${API}/api/apps/${appId}/download`, { headers: headers() });
      if (!response.ok) throw await failure(response);
      const url = URL.createObjectURL(await response.blob());
      h("a", { href: url, download: `${app.name}.zip` }).click();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (err) { report(err); }
  }
  async function context() {
    try {
      const w = await api("GET", `/api/apps/${appId}/context`);
      panel.hidden = false;
      panel.replaceChildren(h("p", { id: "context-total" }, `The model sees ${w.messages.length} messages, ${w.totalTokens} tokens` +
        (w.evictedUnits ? `; ${w.evictedUnits} older steps left out` : "") + (w.elidedPayloads ? `; ${w.elidedPayloads} long results shortened` : "")),
        h("table", {}, w.messages.map((m, i) => h("tr", {}, h("td", {}, m.role), h("td", {}, String(w.tokens[i] ?? "")),
          h("td", {}, h("pre", {}, (m.content || "") + (m.tool_calls ? "\n" + m.tool_calls.map((c) => `→ ${c.function.name}(${c.function.arguments.slice(0, 200)})`).join("\n") : "")))))));
    } catch (err) { report(err); }
  }

  view.replaceChildren(h("div", { class: "workspace" },
    h("section", { class: "chat" }, h("div", { class: "row" }, h("h2", { id: "app-name" }, app.name),
      h("span", { class: "small" }, app.codeGenType)), messages,
      h("div", { class: "composer" }, chipSlot, input, h("div", { class: "row" }, send,
        h("span", { class: "small" }, "Ctrl+Enter sends"), inputCount))),
    h("section", { class: "preview" }, h("div", { class: "toolbar" }, editButton, deployButton,
      h("button", { class: "secondary", onclick: download }, "Download"),
      h("button", { class: "secondary", id: "context", onclick: context }, "What the AI sees"),
      h("a", { href: app.previewUrl, target: "_blank", rel: "noopener" }, "Open preview")), panel, frame)));
  const count = await loadHistory(false);
  const start = sessionStorage.getItem(`zc_start_${appId}`);
  if (start && !count) { sessionStorage.removeItem(`zc_start_${appId}`); chat(start); }
  if (app.deployUrl) { panel.hidden = false; showBuilds().catch(report); }
}

// -- admin --------------------------------------------------------------------------------------

async function admin(tab) {
  if (!me || me.role !== "admin") { view.replaceChildren(h("p", {}, "Admins only.")); return; }
  const body = h("div");
  const tabs = h("div", { class: "tabs" },
    h("a", { href: "#/admin/apps", class: tab === "users" ? "" : "active" }, "Apps"),
    h("a", { href: "#/admin/users", class: tab === "users" ? "active" : "" }, "Users"));
  view.replaceChildren(tabs, body);
  const search = h("input", { type: "search", placeholder: "Search", "aria-label": "search" });
  const table = h("table"); const more = h("button", { class: "secondary", hidden: true }, "Load more");
  let cursor = null;
  async function load(reset) {
    if (reset) { cursor = null; table.replaceChildren(); }
    const params = new URLSearchParams({ limit: "20" });
    if (cursor) params.set("cursor", cursor);
    if (search.value.trim()) params.set("q", search.value.trim());
    try {
      if (tab === "users") {
        const page = await api("GET", `/api/admin/users?${params}`);
        table.append(...page.users.map((u) => h("tr", {}, h("td", {}, u.account), h("td", {}, u.name),
          h("td", {}, u.role), h("td", {}, when(u.createdAt)), h("td", {}, `${u.failedLogins} failed logins`))));
        cursor = page.nextCursor;
      } else {
        const page = await api("GET", `/api/admin/apps?${params}`);
        table.append(...page.apps.map(adminAppRow));
        cursor = page.nextCursor;
      }
      more.hidden = !cursor;
    } catch (err) { report(err); }
  }
  function adminAppRow(a) {
    const row = h("tr", { "data-app": a.id });
    const featured = a.priority >= 99;
    row.append(h("td", {}, h("a", { href: `#/apps/${a.id}` }, a.name)), h("td", { class: "small" }, a.owner),
      h("td", {}, featured ? "featured" : ""),
      h("td", {}, h("div", { class: "row" },
        h("button", { class: "secondary", onclick: async () => {
          try { await api("PATCH", `/api/admin/apps/${a.id}`, { priority: featured ? 0 : 99 }); load(true); } catch (err) { report(err); } } },
          featured ? "Unfeature" : "Feature"),
        h("button", { class: "secondary", onclick: async () => {
          const name = prompt("New name", a.name);
          if (!name) return;
          try { await api("PATCH", `/api/admin/apps/${a.id}`, { name }); load(true); } catch (err) { report(err); } } }, "Rename"),
        h("button", { class: "secondary", onclick: () => showHistory(a) }, "History"),
        h("button", { class: "danger", onclick: async () => {
          if (!confirm(`Delete “${a.name}” and all its data?`)) return;
          try { await api("DELETE", `/api/admin/apps/${a.id}`); load(true); } catch (err) { report(err); } } }, "Delete"))));
    return row;
  }
  async function showHistory(a) {
    try {
      const page = await api("GET", `/api/apps/${a.id}/history?limit=50`);
      const box = h("div", { class: "panel" }, h("div", { class: "row" }, h("h3", {}, `History of ${a.name}`),
        h("button", { class: "danger", onclick: async () => {
          if (!confirm("Forget this app's conversation?")) return;
          try { await api("DELETE", `/api/admin/apps/${a.id}/history`); box.remove(); notify("History cleared"); } catch (err) { report(err); } } }, "Clear history")),
        page.entries.map((e) => h("p", {}, h("b", {}, `${e.role} (${e.status}) `), e.content.slice(0, 400))));
      body.prepend(box);
    } catch (err) { report(err); }
  }
  search.addEventListener("input", () => { clearTimeout(load.t); load.t = setTimeout(() => load(true), 250); });
  more.addEventListener("click", () => load(false));
  body.append(search, h("div", { class: "panel" }, table), more);
  load(true);
}

// -- routing ------------------------------------------------------------------------------------

async function route() {
  window.onmessage = null;
  clearToast();  // an error belongs to the page it happened on
  const path = location.hash.slice(1) || "/";
  if (!me && token()) await loadMe();
  renderNav();
  if (path === "/login") return authForm("login");
  if (path === "/register") return authForm("register");
  if (!me) { location.hash = "#/login"; return; }
  const appMatch = path.match(/^\/apps\/([a-z0-9]{20})$/);
  if (appMatch) return appPage(appMatch[1]);
  if (path.startsWith("/admin")) return admin(path.endsWith("/users") ? "users" : "apps");
  return home();
}

window.addEventListener("hashchange", () => route().catch(report));
route().catch(report);
