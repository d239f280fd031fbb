// The zerocode console: a static single-page app that talks only to the public HTTP API.
// Hash routes: #/login #/register #/ (home) #/apps/{id} #/admin. No build step, no CDN.
// Strings: i18n.js (English, Chinese); replies: render.js; code and versions: code.js;
// acceptance checks: checks.js; phones, the theme, tabs and announcements: layout.js.

import { EXAMPLES, LANGS, lang, setLang, t } from "./i18n.js";
import { codeView, versionsView } from "./code.js";
import { checkItem, checksView, tallyLabel, tallyShort } from "./checks.js";
import {
  STATUS_OF, badge, drawCheck, drawStreaming, entryView, fillReply, foldTurns, h, markdown, parseReply, replyShell,
  stepItem, tallyLine, toolStep, userBubble, when,
} from "./render.js";
import { announce, foldingNotice, narrow, phoneSwitch, rove, tabKeys, themeSwitch } from "./layout.js";
import { editMode, focusNext } from "./keyboard.js";
import { otherTabs } from "./tabs.js";  // many tabs, one truth
import { afterTurn, turnWrote } from "./turns.js";  // what a stopped turn kept, and its undo
import { unreachable } from "./reach.js";  // also: a banner while the server cannot be reached
import { ApiError, blank, explain } from "./messages.js";

const API = ((window.ZEROCODE_CONFIG && window.ZEROCODE_CONFIG.api) || "").replace(/\/+$/, "");
const view = document.getElementById("view");
const nav = document.getElementById("nav");
const toast = document.getElementById("toast");
let me = null;

// -- the API --------------------------------------------------------------------------------

function token() { return localStorage.getItem("zc_token"); }

function headers(extra = {}) {
  const h_ = { ...extra };
  if (token()) h_.Authorization = `Bearer ${token()}`;
  return h_;
}

async function failure(response) {
  let code = "http_error", message = response.statusText || `HTTP ${response.status}`, detail = {};
  try {
    const body = await response.json();
    if (body && body.error) ({ code, message } = detail = body.error);
  } catch (_) { /* not JSON */ }
  if (code === "storage_unavailable") checkStorage();
  return new ApiError(response.status, code, message,
                      Number(response.headers.get("Retry-After") || 0), detail);
}

async function api(method, path, body) {
  const init = { method, headers: headers(body ? { "Content-Type": "application/json" } : {}) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(API + path, init);
  if (!response.ok) throw await failure(response);
  return response.status === 204 ? null : response.json();
}

// The response itself, for an answer that is not JSON or whose headers matter (the code
// editor's file and its ETag, a save with If-Match).
async function apiRaw(method, path, { body, headers: extra = {} } = {}) {
  const init = { method, headers: headers({ ...(body !== undefined ? { "Content-Type": "application/json" } : {}), ...extra }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(API + path, init);
  if (!response.ok) throw await failure(response);
  return response;
}

// An image behind the API's auth (a failed check's screenshot, a preview cover) as a data:
// URL: an <img> cannot send the bearer token, and the console's CSP allows data: images,
// not blob: ones.
// Each path is fetched once per page load.
const images = new Map();
function loadImage(path) {
  const url = /^https?:/.test(path) ? path : API + path;
  if (!images.has(url)) {
    images.set(url, fetch(url, { headers: headers() }).then(async (response) => {
      if (!response.ok) throw await failure(response);
      const blob = await response.blob();
      return new Promise((resolve, reject) => {
        const reader = new FileReader();
        reader.onload = () => resolve(reader.result);
        reader.onerror = () => reject(reader.error);
        reader.readAsDataURL(blob);
      });
    }).catch((err) => { images.delete(url); throw err; }));
  }
  return images.get(url);
}

// What the platform runs (GET /api/health), asked once: whether the offline model answers.
let healthInfo = null;
function health() {
  if (!healthInfo) healthInfo = api("GET", "/api/health").catch(() => null);
  return healthInfo;
}

// A banner while /api/health says "degraded" (storage cannot take a write, or the data
// directory is short of space): asked at load, every 30 s, and right after any answer with
// the error code storage_unavailable; gone once health says "ok" again. Admins also read why.
const STORAGE_CHECK_MS = 30000;
const storageBanner = h("div", { id: "storage-banner", role: "status", hidden: true });
document.querySelector("header.top").after(storageBanner);
let storageHealth = null;
let storageAsked = null, storageAgain = false;

function drawStorage() {
  const degraded = Boolean(storageHealth && storageHealth.status === "degraded");
  storageBanner.hidden = !degraded;
  storageBanner.replaceChildren(...(degraded
    ? [h("b", {}, t("storage.degraded")), " ", t("storage.advice"),
       storageHealth.reason ? h("div", { class: "small" }, t("storage.reason", { reason: storageHealth.reason })) : null]
    : []));
}

// One question at a time; one asked meanwhile is asked again after it (the answer on its
// way may predate the failure that asked).
function checkStorage() {
  if (storageAsked) { storageAgain = true; return storageAsked; }
  storageAsked = api("GET", "/api/health")
    .then((info) => { storageHealth = info; drawStorage(); })
    .catch(() => { /* no answer: the banner stays as it was */ })
    .finally(() => {
      storageAsked = null;
      if (storageAgain) { storageAgain = false; checkStorage(); }
    });
  return storageAsked;
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

// A message for the next page (a navigation clears the toast of the page it leaves).
let flashed = null;
function flash(text) { flashed = text; }

function report(err) {
  notify(unreachable(err) ? t("reach.notSent") : explain(err), true);
  if (err instanceof ApiError && err.status === 401) signOut(false);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// -- small DOM helpers ------------------------------------------------------------------------

const MAX_CHARS = 8000;  // the API's message limit (ZEROCODE_MAX_MESSAGE_CHARS)

// "N / 8000" under a text field, warning near the limit. Nothing is cut: a longer text (a
// paste) stays whole, the counter says by how much it is over, and it is not sent until it
// is shortened (out.over()). A screen reader hears it only when the count comes near the
// limit, reaches it and passes it, not at every key.
function counter(field) {
  const out = h("div", { class: "counter" });
  let level = 0;
  const update = () => {
    const n = field.value.length;
    const now = n > MAX_CHARS ? 3 : n === MAX_CHARS ? 2 : n >= MAX_CHARS * 0.9 ? 1 : 0;
    out.textContent = now === 3
      ? `${n} / ${MAX_CHARS} — ${t("counter.over", { over: n - MAX_CHARS, max: MAX_CHARS })}`
      : `${n} / ${MAX_CHARS}`;
    out.classList.toggle("near", now > 0);
    out.classList.toggle("over", now === 3);
    if (now > level && (document.activeElement === field || now === 3)) {
      announce(now === 3 ? t("counter.over", { over: n - MAX_CHARS, max: MAX_CHARS })
        : t(now === 2 ? "counter.full" : "counter.near", { n, max: MAX_CHARS }));
    }
    level = now;
  };
  field.addEventListener("input", update);
  update();
  out.update = update;
  // Whether the text is over the limit: then it is not sent, and the counter says why.
  out.over = () => {
    update();
    if (field.value.length <= MAX_CHARS) return false;
    announce(t("counter.over", { over: field.value.length - MAX_CHARS, max: MAX_CHARS }));
    field.focus();
    return true;
  };
  return out;
}

// A table with its header row, in a box that scrolls sideways on a narrow screen.
function table(heads, rows, attrs = {}) {
  return h("div", { class: "table-wrap" }, h("table", attrs,
    h("thead", {}, h("tr", {}, heads.map((head) => h("th", { scope: "col" }, head)))),
    h("tbody", {}, rows)));
}

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

function languageSwitch() {
  const select = h("select", { id: "lang", "aria-label": t("nav.language"), title: t("nav.language") },
    Object.entries(LANGS).map(([code, label]) => h("option", { value: code, selected: code === lang() }, label)));
  select.addEventListener("change", () => { setLang(select.value); route().catch(report); });
  return select;
}

function renderNav() {
  nav.replaceChildren(...(me
    ? [h("a", { href: "#/" }, t("nav.myApps")),
       me.role === "admin" ? h("a", { href: "#/admin" }, t("nav.admin")) : null,
       h("span", { class: "small", id: "whoami" }, me.account),
       h("button", { class: "secondary", id: "logout", onclick: () => signOut() }, t("nav.logout"))]
    : [h("a", { href: "#/login" }, t("nav.login")), h("a", { href: "#/register" }, t("nav.register"))])
    .filter(Boolean), languageSwitch(), themeSwitch());
}

function authForm(kind) {
  const account = h("input", { name: "account", placeholder: t("auth.account"), "aria-label": t("auth.account"),
                               autocomplete: "username" });
  const password = h("input", { name: "password", type: "password", placeholder: t("auth.password"),
                                "aria-label": t("auth.password"),
                                autocomplete: kind === "login" ? "current-password" : "new-password" });
  const submit = h("button", { type: "submit" }, kind === "login" ? t("auth.login") : t("auth.create"));
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
  } }, h("h2", {}, kind === "login" ? t("auth.login") : t("auth.register")), account, password, submit,
     h("span", { class: "small" }, kind === "login"
       ? h("a", { href: "#/register" }, t("auth.noAccount"))
       : t("auth.rules")));
  view.replaceChildren(form);
  account.focus();
}

// -- home: create, my apps, featured ------------------------------------------------------------

// An app's cover: its deploy's (public), else its preview's (private to its owner and
// admins, so read with the caller's credentials: loadImage), else its kind. The kind stays
// when the preview cover cannot be read.
function coverOf(app) {
  if (app.cover) return h("img", { src: app.cover, alt: "", "data-cover": "deploy" });
  const kind = h("div", { class: "cover" }, app.codeGenType);
  if (app.previewCover) {
    loadImage(app.previewCover)
      .then((src) => kind.replaceWith(h("img", { src, alt: "", "data-cover": "preview" })))
      .catch(() => {});
  }
  return kind;
}

function appTile(app) {
  return h("a", { class: "tile", href: `#/apps/${app.id}`, "data-app": app.id },
    coverOf(app),
    h("div", { class: "meta" }, h("div", { class: "name" }, app.name),
      h("div", { class: "small" }, `${app.codeGenType} · ${when(app.createdAt)}`)));
}

function appList(title, scope) {
  const grid = h("div", { class: "grid", id: `${scope}-apps` });
  const more = h("button", { class: "secondary", hidden: true }, t("home.more"));
  const search = h("input", { type: "search", placeholder: t("home.search"),
                              "aria-label": t("home.searchLabel", { scope: title }) });
  let cursor = null;
  async function load(reset) {
    const params = new URLSearchParams({ scope, limit: "12" });
    if (!reset && cursor) params.set("cursor", cursor);
    if (search.value.trim()) params.set("q", search.value.trim());
    try {
      const page = await api("GET", `/api/apps?${params}`);
      if (reset) grid.replaceChildren();
      grid.append(...page.apps.map(appTile));
      if (!grid.children.length) grid.append(h("p", { class: "small" }, t("home.none")));
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

// When no model endpoint is configured the offline scripted model answers: say so, and offer
// prompts it really handles (clicking one fills the prompt box).
function offlineNotice(onPick) {
  const slot = h("div", { class: "offline-slot" });
  health().then((info) => {
    if (!info || !info.offlineModel) return;
    slot.replaceChildren(foldingNotice("offline-notice", h("b", {}, t("offline.title")),
      h("p", {}, t("offline.body")),
      h("p", { class: "small" }, t("offline.try")),
      h("div", { class: "examples" }, (EXAMPLES[lang()] || EXAMPLES.en).map((text) =>
        h("button", { type: "button", class: "secondary example", onclick: () => onPick(text) }, text)))));
  });
  return slot;
}

function home() {
  const prompt = h("textarea", { id: "prompt", placeholder: t("home.placeholder"),
                                 "aria-label": t("home.promptLabel") });
  const promptCount = counter(prompt);
  const mode = h("select", { id: "mode", "aria-label": t("home.mode") },
    h("option", { value: "" }, t("home.mode.auto")), h("option", { value: "html" }, t("home.mode.html")),
    h("option", { value: "multi_file" }, t("home.mode.multi")), h("option", { value: "vue_project" }, t("home.mode.vue")));
  const go = h("button", { type: "submit", id: "create" }, t("home.go"));
  const form = h("form", { class: "card create", onsubmit: async (e) => {
    e.preventDefault();
    if (promptCount.over()) return;
    if (!prompt.value.trim()) { notify(blank("initPrompt"), true); prompt.focus(); return; }
    go.disabled = true;
    try {
      const body = { initPrompt: prompt.value };
      if (mode.value) body.codeGenType = mode.value;
      const app = await api("POST", "/api/apps", body);
      sessionStorage.setItem(`zc_start_${app.id}`, app.initPrompt);
      location.hash = `#/apps/${app.id}`;
    } catch (err) { report(err); } finally { go.disabled = false; }
  } }, h("h2", {}, t("home.create")), prompt, promptCount, h("div", { class: "row" }, mode, go));
  const notice = offlineNotice((text) => {
    prompt.value = text; mode.value = ""; promptCount.update(); prompt.focus();
  });
  view.replaceChildren(notice, form, appList(t("home.mine"), "mine"), appList(t("home.featured"), "featured"));
  focusNext(prompt);  // after registering or signing in, the next thing is the prompt
}

// -- the app page -------------------------------------------------------------------------------

// A picked element as the API takes it: the picker's fields cut to size, and the preview
// build it was picked in (`build`: the console's own record of what the frame shows, never
// the frame's word; a stored element, for a Retry, keeps its own).
function pickedElement(raw, build = undefined) {
  const field = (value, max) => (typeof value === "string" ? value.slice(0, max) : "");
  const el = raw && typeof raw === "object" ? raw : {};
  return { tag: field(el.tag, 40), selector: field(el.selector, 500), text: field(el.text, 500),
           pagePath: field(el.pagePath, 300) || "/",
           buildId: build === undefined ? field(el.buildId, 40) : build || "" };
}

function parseFrames(buffer, onEvent) {
  // SSE: frames end with a blank line; comment lines (keep-alives) start with ":". Each
  // frame of a turn carries its id, "{turn}:{seq}".
  let cut;
  while ((cut = buffer.indexOf("\n\n")) >= 0) {
    const frame = buffer.slice(0, cut);
    buffer = buffer.slice(cut + 2);
    let event = "message", id = ""; const data = [];
    for (const line of frame.split("\n")) {
      if (line.startsWith("id:")) id = line.slice(3).trim();
      else if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    if (data.length) onEvent(event, JSON.parse(data.join("\n")), id);
  }
  return buffer;
}

// Read an SSE response to its end, or until onEvent returns true (the turn's done). Throws
// when the connection breaks.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader(); const decoder = new TextDecoder();
  let buffer = "", enough = false;
  while (!enough) {
    const chunk = await reader.read();
    if (chunk.done) return;
    buffer = parseFrames(buffer + decoder.decode(chunk.value, { stream: true }), (event, data, id) => {
      if (!enough) enough = onEvent(event, data, id) === true;
    });
  }
  reader.cancel().catch(() => { /* closed already */ });
}

// "{turn}:{seq}" as numbers; zeros for a frame without one.
function eventId(id) {
  const m = /^(\d+):(\d+)$/.exec(id || "");
  return m ? { turn: Number(m[1]), seq: Number(m[2]) } : { turn: 0, seq: 0 };
}

// Whether the app has a preview to show: a preview build of it has succeeded. (previewUrl
// exists from the start; before the first build it answers 404.)
async function previewBuilt(appId) {
  let cursor = null;
  for (let page = 0; page < 5; page++) {
    const params = new URLSearchParams({ purpose: "preview", limit: "50" });
    if (cursor) params.set("cursor", cursor);
    const list = await api("GET", `/api/apps/${appId}/builds?${params}`);
    if (list.builds.some((b) => b.state === "succeeded")) return true;
    cursor = list.nextCursor;
    if (!cursor) return false;
  }
  return true;  // hundreds of builds: one of them surely worked, let the frame say
}

async function appPage(appId, openVersion = null) {
  let app;
  try { app = await api("GET", `/api/apps/${appId}`); } catch (err) {
    report(err);
    view.replaceChildren(h("p", {}, t("app.missing"), h("a", { href: "#/" }, t("app.back"))));
    return;
  }
  const messages = h("div", { class: "messages", id: "messages", role: "log", "aria-live": "polite",
                              "aria-label": t("phone.chat"), tabindex: "0" });
  const input = h("textarea", { id: "message", placeholder: t("app.ask"),
                                "aria-label": t("app.messageLabel") });
  const inputCount = counter(input);
  const send = h("button", { id: "send" }, t("app.send"));
  const stopButton = h("button", { class: "danger", id: "stop", type: "button", hidden: true,
                                   title: t("app.stopHint") }, t("app.stop"));
  const chipSlot = h("div", { class: "row", id: "chips" });
  // The preview is another origin, and sandboxed without allow-same-origin on top: its
  // scripts run with an opaque origin, so it can reach neither its own origin's storage nor
  // this page. The frame's name tells the picker which origin may command it (picker.js).
  // It gets its address only once a preview build has succeeded (before, a placeholder).
  const frame = h("iframe", { id: "preview", title: t("app.tab.preview"), hidden: true,
                              name: `zerocode-console ${location.origin}`,
                              sandbox: "allow-scripts allow-forms" });
  const placeholder = h("div", { class: "placeholder", id: "preview-placeholder", role: "status", hidden: true });
  const editButton = h("button", { class: "secondary", id: "edit", "aria-pressed": "false" }, t("app.edit"));
  const edit = editMode(editButton, frame);  // the builder's wish, paused while the preview changes
  // Over the preview when it is older than the app's files (a turn cut off, a failed build).
  const rebuildButton = h("button", { type: "button", id: "rebuild" }, t("preview.rebuild"));
  const staleNotice = h("div", { class: "notice stale", id: "preview-stale", role: "status", hidden: true },
    h("p", {}, h("b", {}, t("preview.stale")), " ", t("preview.staleWhy")), rebuildButton);
  const deployButton = h("button", { id: "deploy" }, t("app.deploy"));
  const contextButton = h("button", { class: "secondary", id: "context", "aria-expanded": "false",
                                      "aria-controls": "context-panel" }, t("app.context"));
  const panel = h("section", { class: "panel", id: "panel", hidden: true });
  const contextPanel = h("section", { class: "panel", id: "context-panel", hidden: true,
                                      "aria-labelledby": "context-title" });
  let picked = null, running = false, restoring = false, rebuilding = false,
    savingText = false, before = null, loadingOlder = false, hasPreview = false, stale = false,
    stoppable = null, framed = false;
  // Which preview build the frame shows (issue 24): an element picked in it names that build,
  // and the API refuses one of any build but the preview shown now. `latestBuild` is the
  // newest the console has heard of (a build event, GET/POST …/preview, a restore's or an
  // edit's build), taken as the frame's address is set (never after: the address may only
  // show that build or a newer one, which the API refuses rather than mistakes); it becomes
  // `frameBuild` once that page has loaded. A page of another build drops the pick.
  let latestBuild = null, loadingBuild = null, frameBuild = null;
  const asked = new Map();  // turn → its user message { content, element }, from the history

  // -- the preview pane: the frame, or a placeholder until the first build succeeds ----------
  function loadFrame(fresh) {
    placeholder.hidden = true;
    frame.hidden = false;
    loadingBuild = latestBuild;
    frame.src = fresh ? `${app.previewUrl}?t=${Date.now()}` : app.previewUrl;
  }
  frame.addEventListener("load", () => {
    if (loadingBuild === frameBuild) return;  // the same build (another of its pages too)
    frameBuild = loadingBuild;
    frame.dataset.build = frameBuild || "";
    dropPick();
  });
  // A build the console heard of: the preview shows it (or soon will). Build ids grow with
  // time ("b{ms}{hex}"), and the preview only moves on: a late answer naming an older
  // build changes nothing.
  function heard(build) { if (build && (!latestBuild || build > latestBuild)) latestBuild = build; }
  function dropPick() { if (picked) { picked = null; showChip(); } }
  function showPlaceholder(building) {
    frame.hidden = true;
    placeholder.hidden = false;
    placeholder.dataset.state = building ? "building" : "none";
    placeholder.replaceChildren(building ? h("span", { class: "spinner", "aria-hidden": "true" }) : "",
      h("p", {}, building ? t("preview.building") : t("preview.none")));
  }

  function showChip() {
    chipSlot.replaceChildren(picked ? h("span", { class: "chip", id: "picked", "data-build": picked.buildId },
      `<${picked.tag}> ${picked.text.slice(0, 40)}`,
      h("button", { title: t("app.remove"), "aria-label": t("app.removeSelection"),
                    onclick: () => { picked = null; showChip(); } }, "×")) : "");
  }
  // Only the preview frame's window, whose sandboxed (opaque) origin reads "null", may talk
  // to this page; what it says is untrusted input, kept to the fields and sizes the API takes.
  window.onmessage = (e) => {
    if (e.source !== frame.contentWindow || e.origin !== "null" || !e.data) return;
    if (e.data.zerocode === "ready" && edit.on) edit.tell();
    if (e.data.zerocode === "picked" && edit.active) {
      picked = pickedElement(e.data.element, frameBuild);
      showChip();
      announce(t("edit.picked", { element: `<${picked.tag}> ${picked.text.slice(0, 40)}` }));
      if (narrow.matches) phone.show("chat", true);  // on a phone: back to the message, chip and all
      input.focus();
    }
    if (e.data.zerocode === "textEdit" && edit.active) saveText(e.data);
    if (e.data.zerocode === "escape") edit.set(false);  // Esc inside the preview
  };
  // A text edited in place in the preview (picker.js): saved without a model turn when the
  // platform finds the one place in the source that writes it; else a model turn is offered,
  // with the element picked and the change asked for in the message box.
  async function saveText(data) {
    const element = pickedElement(data.element, frameBuild);
    const newText = typeof data.newText === "string" ? data.newText.slice(0, 2000) : "";
    const page = typeof data.page === "string" ? data.page.slice(0, 300) : "/";
    if (!newText.trim() || busy()) { if (busy()) notify(t("edit.busy"), true); loadFrame(true); return; }
    savingText = true; showBusy();
    notify(t("edit.saving"));
    try {
      const result = await api("POST", `/api/apps/${appId}/edits/text`, { element, newText, page });
      const build = await edited(result);
      const failed = Boolean(build && build.state !== "succeeded");
      notify(t(failed ? "edit.savedBuildFailed" : "edit.saved", { version: result.version.id }), failed);
    } catch (err) {
      loadFrame(true);  // the frame shows the text it had
      if (err instanceof ApiError && err.code === "text_not_editable") {
        picked = element;
        showChip();
        input.value = t("edit.askModel", { text: newText });
        inputCount.update();
        if (narrow.matches) phone.show("chat", true);
        input.focus();
        notify(t("edit.notEditable", { message: err.message }), true);
      } else {
        if (err instanceof ApiError && err.code === "preview_out_of_date") checkPreview();
        report(err);
      }
    } finally { savingText = false; showBusy(); }
  }
  // Esc leaves Edit mode (from anywhere on the page but the preview itself).
  document.onkeydown = (e) => { if (e.key === "Escape") edit.set(false); };

  // -- the chat ----------------------------------------------------------------------------
  // A page of the history drawn (newest last); its entries, newest first.
  async function loadHistory(older) {
    if (loadingOlder || (older && !before)) return [];
    loadingOlder = true;
    const params = new URLSearchParams({ limit: "20" });
    if (older) params.set("before", before);
    try {
      const page = await api("GET", `/api/apps/${appId}/history?${params}`);
      const height = messages.scrollHeight;
      messages.prepend(...page.entries.slice().reverse().map(entryView));
      foldTurns(messages);  // all but the newest turns, folded to a line each
      for (const e of page.entries) if (e.role === "user") asked.set(e.turn, { content: e.content, element: e.element });
      const newest = page.entries[0];
      if (!older && newest && newest.role !== "user" && (newest.status === "failed" || newest.status === "interrupted")) {
        offerRetry(messages.lastElementChild, asked.get(newest.turn), newest.turn);
      }
      before = page.nextCursor;
      if (older) messages.scrollTop = messages.scrollHeight - height;
      else messages.scrollTop = messages.scrollHeight;
      // Folded turns are short: a chat that does not fill its box cannot be scrolled up to
      // load the next older page, so that page comes at once.
      if (before && messages.clientHeight && messages.scrollHeight <= messages.clientHeight) {
        setTimeout(() => loadHistory(true), 0);
      }
      return page.entries;
    } catch (err) { report(err); return []; } finally { loadingOlder = false; }
  }
  async function reloadHistory() {
    while (loadingOlder) await sleep(50);
    messages.replaceChildren();
    before = null;
    await loadHistory(false);
  }
  messages.addEventListener("scroll", () => { if (messages.scrollTop < 40) loadHistory(true); });
  // A file's change line links to the diff of the version its turn made: followed here, it
  // opens the Versions tab at that version without leaving the page (and the running turn).
  messages.addEventListener("click", (e) => {
    const link = e.target.closest("a.diff-link");
    if (!link || e.button || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    showTab("versions", link.dataset.version);
    if (narrow.matches) phone.show("preview", true);
    document.getElementById("tab-versions").focus();
  });

  // The reply as stored, drawn over the live one when its turn ends: the same function draws
  // it after a reload, so the two look the same (steps, outcome lines, badge).
  async function settle(shell, turn) {
    try {
      const page = await api("GET", `/api/apps/${appId}/history?limit=5`);
      const entry = page.entries.find((e) => e.turn === turn && (e.role === "ai" || e.role === "error"));
      if (!entry) return false;
      // The stored check lines carry no screenshot: the live ones (with theirs) stay.
      const live = [...shell.steps.querySelectorAll("li.check")];
      fillReply(shell, parseReply(entry.content), STATUS_OF[entry.status] || "failed");
      const stored = [...shell.steps.querySelectorAll("li.check")];
      if (live.length === stored.length && live.every((li, i) => li.dataset.check === stored[i].dataset.check &&
                                                           li.dataset.status === stored[i].dataset.status)) {
        stored.forEach((li, i) => li.replaceWith(live[i]));
      }
      return true;
    } catch (_) { /* keep the live drawing */ }
    return false;
  }

  // One change at a time: a running turn, a restore or a rebuild disables the others.
  function busy() { return running || restoring || rebuilding || savingText || code.saving(); }
  // What changes the preview under a pick: picking pauses and the pick is dropped meanwhile
  // (issue 24; a text saved in place keeps Edit mode: its new build drops an older pick).
  // Edit mode itself stays as the builder set it, and picks again in the new preview.
  function locked() { return running || restoring || rebuilding; }
  function showEditable() {
    const off = stale || locked();
    edit.pause(off, stale ? t("preview.staleEdit") : off ? t("preview.busyEdit") : "");
    if (off) dropPick();
  }
  function showBusy() {
    showEditable();
    send.disabled = busy();
    rebuildButton.disabled = busy();
    versions.setBusy(busy());
    code.setBusy();
    checks.setBusy(busy());
  }

  // A reply being drawn as its turn's events arrive.
  function liveShell() {
    const shell = replyShell();
    shell.el.dataset.turn = "running";
    messages.append(shell.el);
    foldTurns(messages);
    messages.scrollTop = messages.scrollHeight;
    return shell;
  }

  // What each event of a turn adds to its reply: one drawing for the chat's own stream, a
  // resumed one and a replay (a reattach after a reload).
  function replyDrawer(shell) {
    let said = "", buildLine = null;
    const tools = new Map();
    return (event, data) => {
      if (event === "message") {
        said += data.d;
        // An html / multi-file answer's code streams folded; its stored reply says what it did.
        if (app.codeGenType === "vue_project") shell.answer.innerHTML = markdown(said);
        else drawStreaming(shell.answer, said);
      }
      else if (event === "thinking") {
        shell.thinking.hidden = false; shell.thinking.lastChild.textContent += data.text;
      } else if (event === "tool") {
        const step = data.phase === "call"
          ? { state: "running", label: `${data.name}${data.path ? " " + data.path : ""}` }
          : toolStep(data.name, data.ok, data.summary);
        const item = stepItem(step);
        const old = tools.get(data.id);
        if (old) old.replaceWith(item); else shell.steps.append(item);
        tools.set(data.id, item);
      } else if (event === "build") {
        const label = data.status === "running" ? t("step.buildRunning")
          : data.status === "succeeded" ? t("step.buildOk")
          : t("step.buildFailed") + (data.error || data.log_tail
            ? ` — ${data.error || data.log_tail.split("\n").slice(-3).join(" ")}` : "");
        const state = data.status === "running" ? "running" : data.status === "succeeded" ? "ok" : "failed";
        const item = stepItem({ state, label });
        if (buildLine) buildLine.replaceWith(item); else shell.steps.append(item);
        buildLine = item;
        // The preview shows a new build at once, not only when the turn ends.
        if (data.status === "succeeded") { hasPreview = true; heard(data.buildId); loadFrame(true); framed = true; }
      } else if (event === "check") {
        drawCheck(shell.steps, checkItem(data, loadImage), data.id);
      } else if (event === "repair") {
        shell.steps.append(stepItem({ state: "repair", label: t(data.kind === "acceptance" ? "step.repairChecks" : "step.repair",
          { attempt: data.attempt, max: data.max, why: data.reason }) }));
        buildLine = null;  // the repaired code gets a build line of its own
      } else if (event === "error") {
        if (data.code === "storage_unavailable") checkStorage();
        const p = h("p", { class: "outcome-failed" });
        // A stop is an interruption, worded as the stored reply will say it.
        p.innerHTML = markdown(t(data.code === "stopped" ? "reply.interrupted" : "reply.failed",
                                 { why: data.message }));
        shell.outcome.append(p);
      }
      messages.scrollTop = messages.scrollHeight;
    };
  }

  // A turn's events after `after`, then live until its done (GET …/turns/{turn}/events).
  async function turnEvents(turn, after) {
    const response = await fetch(`${API}/api/apps/${appId}/turns/${turn}/events?after=${after}`,
                                 { headers: headers() });
    if (!response.ok) throw await failure(response);
    return response;
  }

  const RESUMES = 5;  // a broken stream is picked up again up to this many times in a row

  // Draw a turn's events into its reply until its done; the done, or null when the turn
  // could not be followed to its end. The stream is the chat's own, or (null) the turn's
  // events from the first. The turn runs on whatever becomes of a stream: one that breaks
  // before done (a dropped network, a proxy's timeout) is resumed after the last event seen,
  // so nothing is lost and nothing drawn twice. The turn's number comes with the first id.
  // A page left (another route) stops following.
  async function streamTurn(shell, response, turn) {
    const draw = replyDrawer(shell);
    const left = () => !shell.el.isConnected;
    let seq = 0, done = null;
    for (let misses = 0; ;) {
      const from = seq;
      try {
        await readEvents(response || await turnEvents(turn, seq), (event, data, id) => {
          if (left()) return true;
          const at = eventId(id);
          if (at.seq) {
            if (at.seq <= seq) return false;  // seen already
            turn = at.turn; seq = at.seq;
          }
          if (turn && stoppable === null) showStop(turn);
          if (event !== "done") { draw(event, data); return false; }
          done = data;
          hideStop();
          return true;
        });
      } catch (err) {
        const refused = err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429;
        if (refused) { report(err); return null; }  // gone, not yours: asking again will not help
      }
      if (done) return done;
      response = null;
      misses = seq > from ? 1 : misses + 1;
      if (!turn || misses > RESUMES || left()) return null;
      await sleep(300 * 2 ** (misses - 1));
    }
  }

  // Stop: the running turn ends interrupted, "stopped by the user"; its stream says so.
  function showStop(turn) {
    stoppable = turn;
    others.following(turn);
    stopButton.hidden = false;
    stopButton.disabled = false;
  }
  function hideStop() {
    stoppable = null;
    stopButton.hidden = true;
  }
  async function stop() {
    if (stoppable === null) return;
    stopButton.disabled = true;
    try { await api("POST", `/api/apps/${appId}/turns/${stoppable}/cancel`); } catch (err) {
      if (err instanceof ApiError && err.status === 409) return;  // it ended meanwhile
      stopButton.disabled = false;
      report(err);
    }
  }
  stopButton.addEventListener("click", stop);

  // Retry, on the newest reply when its turn failed or was interrupted: a new turn with the
  // same message and element; what the turn kept, with its undo, first (turns.js).
  function offerRetry(el, ask, turn) {
    clearRetry();
    if (!ask) return;
    afterTurn(el, { wrote: turnWrote(api, appId, turn), undo: restore,
      retry: () => chat(ask.content, ask.element ? pickedElement(ask.element) : null, false) });
  }
  function clearRetry() { messages.querySelectorAll(".retry, .turn-kept, .retry-choice").forEach((b) => b.remove()); }

  // Follow a turn to its end, then draw the stored reply over the live one and bring the
  // preview, the code and the versions up to date. Sending waits meanwhile. `ask` is the
  // turn's user message, for a Retry.
  async function follow(shell, response, turn, ask) {
    running = true;
    framed = false;
    showBusy();
    let done = null;
    try {
      done = await streamTurn(shell, response, turn);
      const status = done ? done.status : "lost";
      if (!done || !(await settle(shell, done.turn))) {
        shell.el.append(badge(status));
        shell.el.dataset.turn = status;
      }
      // The suite's verdict on the turn's newest preview, beside its badge.
      if (done && done.checks && !shell.el.querySelector(":scope > .checks-tally")) {
        shell.el.querySelector(":scope > .status").after(tallyLine(done.checks));
      }
      if (status === "failed" || status === "interrupted") offerRetry(shell.el, ask, done.turn);
      messages.scrollTop = messages.scrollHeight;
    } finally {
      running = false;
      hideStop();
      showBusy();
      // The preview reloads after every turn (unless a build event did already); before the
      // first successful build there is nothing to load, and the placeholder says so.
      if (hasPreview && !framed) loadFrame(true);
      if (!hasPreview) showPlaceholder(false);
      if (currentTab === "code") code.refresh();
      if (currentTab === "versions") versions.refresh();
      if (currentTab === "checks") checks.refresh();
      checkPreview();
      if (done) others.tell("ended", done.turn);
      focusNext(input, [send, stopButton, messages]);  // the next message, unless put elsewhere
    }
  }

  // A new turn. `typed`: the message is the composer's, cleared once the turn has started.
  async function chat(text, element, typed) {
    if (busy() || !text.trim()) return;
    running = true;
    showBusy();
    const body = { message: text };
    if (element) body.element = element;
    messages.append(userBubble(text, element));
    const shell = liveShell();
    if (!hasPreview) showPlaceholder(true);
    let response;
    try {
      response = await fetch(`${API}/api/apps/${appId}/chat`, {
        method: "POST", body: JSON.stringify(body),
        headers: headers({ "Content-Type": "application/json" }) });
      if (!response.ok) throw await failure(response);
    } catch (err) {
      shell.el.dataset.turn = "failed";
      shell.el.append(h("span", { class: "status failed" }, t("reply.notSent")));
      running = false;
      showBusy();
      if (!hasPreview) showPlaceholder(false);
      const older = err instanceof ApiError && err.code === "preview_out_of_date";
      if (older) {
        // Picked in an older preview: to be picked again in the one shown now (the frame
        // follows it; a Retry's message waits in the box).
        checkPreview();
        if (!typed) { input.value = text; inputCount.update(); }
      } else if (typed && element && element.buildId === frameBuild) { picked = element; showChip(); }
      report(err);
      return;
    }
    clearRetry();
    if (typed) { input.value = ""; inputCount.update(); picked = null; showChip(); }
    await follow(shell, response, null, { content: text, element });
  }
  send.addEventListener("click", () => { if (!inputCount.over()) chat(input.value, picked, true); });
  // Enter sends (Ctrl/Cmd+Enter too), Shift+Enter breaks the line; an Enter that ends an IME
  // composition (Chinese, Japanese input) only commits the composed text.
  input.addEventListener("keydown", (e) => {
    if (e.key !== "Enter" || e.shiftKey || e.isComposing || e.keyCode === 229) return;
    e.preventDefault();
    if (!inputCount.over()) chat(input.value, picked, true);
  });

  // On opening the page (a reload too): a turn still running, started here before or in
  // another tab, is followed live, replayed from its first event. Its message is in the
  // history already (else it is fetched); only its reply is drawn here.
  async function reattach(turn) {
    if (busy()) return;
    running = true;
    showBusy();
    if (!asked.has(turn)) {
      const page = await api("GET", `/api/apps/${appId}/history?limit=5`).catch(() => ({ entries: [] }));
      const mine = page.entries.find((e) => e.turn === turn && e.role === "user");
      if (mine) {
        asked.set(turn, { content: mine.content, element: mine.element });
        messages.append(entryView(mine));
      }
    }
    await follow(liveShell(), null, turn, asked.get(turn));
  }

  // -- the preview's state: out of date when it is older than the app's files -------------
  function showStale(on) {
    stale = on;
    staleNotice.hidden = !on;
    // An element of an older preview may be gone from the files: no picking until rebuilt.
    showEditable();
  }
  // The preview's state; a build newer than the frame's (another tab's turn, a refused pick)
  // is loaded.
  async function checkPreview() {
    if (running) return;  // a turn changes the files before its build: its end asks again
    try {
      const state = await api("GET", `/api/apps/${appId}/preview`);
      if (running) return;
      if (state.buildId && state.buildId !== latestBuild) {
        heard(state.buildId);
        if (hasPreview && !locked()) loadFrame(true);
      }
      showStale(!state.upToDate);
    } catch (_) { /* the next turn's end asks again */ }
  }
  async function rebuild() {
    if (busy()) return;
    rebuilding = true;
    showBusy();
    rebuildButton.textContent = t("preview.rebuilding");
    try {
      const state = await api("POST", `/api/apps/${appId}/preview`);
      if (state.buildId) { hasPreview = true; heard(state.buildId); loadFrame(true); }
      if (currentTab === "checks") checks.refresh();  // they run on the rebuilt preview
      showStale(!state.upToDate);
      if (state.build && state.build.state === "failed") {
        notify(t("preview.rebuildFailed", { why: state.build.error || t("build.failed") }), true);
      }
    } catch (err) { report(err); } finally {
      rebuilding = false;
      rebuildButton.textContent = t("preview.rebuild");
      showBusy();
    }
  }
  rebuildButton.addEventListener("click", rebuild);

  // Another tab or device changed the app (its turn ended, a restore, an edit): read it again.
  async function caughtUp() {
    await reloadHistory();
    hasPreview = hasPreview || await previewBuilt(appId).catch(() => false);
    if (currentTab !== "preview") ({ code, versions, checks })[currentTab].refresh();
    checkPreview();
  }

  // -- versions: restore one, then show what it changed everywhere -----------------------
  // Whether the files were restored (a failure is said).
  async function restore(versionId) {
    if (busy()) return false;
    restoring = true;
    showBusy();
    notify(t("versions.restoring", { version: versionId }));
    let result = null;
    try {
      result = await api("POST", `/api/apps/${appId}/versions/${versionId}/restore`);
      const build = await settled(result.build);
      if (build && build.state === "succeeded") { hasPreview = true; heard(build.id); }
      if (hasPreview) loadFrame(true);
      await reloadHistory();
      if (currentTab === "versions") await versions.refresh();
      if (currentTab === "code") await code.refresh();
      if (currentTab === "checks") checks.refresh();  // they run on the restored preview
      checkPreview();
      notify(result.changed.length
        ? t("versions.restored", { from: versionId, to: result.version.id })
        : t("versions.same", { version: versionId }));
    } catch (err) { report(err); } finally {
      restoring = false;
      showBusy();
      if (result) others.tell("changed");  // the other tabs read the restored files
    }
    return result !== null;
  }

  // A file saved by hand in the Code tab (PUT …/files/{path}): the platform made a version and
  // rebuilt the preview; the frame, the chat (the save's note) and the versions follow.
  // A build a restore or an edit started, once it has ended (on AWS it may still be queued
  // or running when the answer comes; locally it has ended).
  async function settled(build) {
    for (let i = 0; build && (build.state === "queued" || build.state === "running") && i < 300; i++) {
      await sleep(1000);
      build = await api("GET", `/api/apps/${appId}/builds/${build.id}`);
    }
    return build;
  }

  async function edited(result) {
    const build = await settled(result.build);
    if (build && build.state === "succeeded") { hasPreview = true; heard(build.id); }
    if (hasPreview) loadFrame(true);
    await reloadHistory();
    await versions.refresh();
    // The checks now run on the edited preview (issue 38): the tab, if shown, follows that
    // run; read before the edit's answer came, it showed the verdicts of the files before.
    if (currentTab === "checks") checks.refresh();
    checkPreview();
    others.tell("changed");
    return build;
  }

  // -- the views: preview, code, versions -------------------------------------------------
  const code = codeView(appId, { api, raw: apiRaw, report, explain, busy, busyChanged: () => showBusy(), onSaved: edited });
  const versions = versionsView(appId, { api, report, restore, busy });
  const checks = checksView(appId, { api, report, notify, loadImage, busy, restore, onApp: (a) => { app = a; } });
  const previewPane = h("div", { class: "pane preview-pane", id: "preview-pane" }, staleNotice, placeholder, frame);
  for (const pane of [code, versions, checks]) pane.el.classList.add("pane");
  const panes = { preview: previewPane, code: code.el, versions: versions.el, checks: checks.el };
  let currentTab = "preview";
  const tabs = Object.keys(panes).map((name) => h("button", {
    type: "button", role: "tab", id: `tab-${name}`, class: "tab", "aria-controls": panes[name].id,
    "aria-selected": String(name === "preview"), onclick: () => showTab(name) }, t(`app.tab.${name}`)));
  tabKeys(tabs, (tab) => showTab(tab.id.slice(4)));
  function showTab(name, version = null) {
    currentTab = name;
    rove(tabs, tabs.find((tab) => tab.id === `tab-${name}`));
    for (const [key, pane] of Object.entries(panes)) pane.hidden = key !== name;
    if (name === "code") code.refresh();
    if (name === "versions") versions.refresh(version);
    if (name === "checks") checks.refresh();
  }
  for (const [name, pane] of Object.entries(panes)) {
    pane.setAttribute("role", "tabpanel");
    pane.setAttribute("aria-labelledby", `tab-${name}`);
  }
  rove(tabs, tabs[0]);
  code.el.hidden = true; versions.el.hidden = true; checks.el.hidden = true;

  // -- deploy and rollback ------------------------------------------------------------------
  async function deploy() {
    // Pending at once, on the button too: a deploy takes seconds before its first state.
    deployButton.disabled = true;
    deployButton.textContent = t("deploy.deploying");
    deployButton.setAttribute("aria-busy", "true");
    panel.hidden = false;
    panel.replaceChildren(h("p", { id: "deploy-status" }, t("deploy.building")));
    try {
      const started = await api("POST", `/api/apps/${appId}/deploy`);
      let build;
      for (;;) {
        build = await api("GET", `/api/apps/${appId}/builds/${started.buildId}`);
        if (build.state === "succeeded" || build.state === "failed") break;
        panel.querySelector("#deploy-status").textContent = t("deploy.state", { state: t(`build.${build.state}`) });
        await sleep(1000);
      }
      app = await api("GET", `/api/apps/${appId}`);
      await showBuilds(build);
    } catch (err) {
      // Deploys that need passing checks say which ones did not pass: kept in the panel.
      if (err instanceof ApiError && err.code === "checks_failed") {
        panel.replaceChildren(h("p", { class: "status failed refused", id: "deploy-status", role: "alert" }, explain(err)));
      } else { report(err); panel.hidden = true; }
    } finally {
      deployButton.disabled = false;
      deployButton.textContent = t("app.deploy");
      deployButton.removeAttribute("aria-busy");
    }
  }
  async function showBuilds(latest) {
    const [list, newest] = await Promise.all([
      api("GET", `/api/apps/${appId}/builds?purpose=deploy&limit=20`),
      api("GET", `/api/apps/${appId}/versions?limit=1`).catch(() => ({ versions: [] }))]);
    const current = newest.versions.length ? newest.versions[0].id : null;
    const rows = list.builds.map((b) => {
      const canRollBack = b.state === "succeeded" && !b.published;
      // A rollback changes the site only; a build made from a known version (other than the
      // files as they are now) offers that version's files too.
      const too = canRollBack && b.versionId && b.versionId !== current
        ? h("input", { type: "checkbox", class: "restore-too", "data-version": b.versionId }) : null;
      // Each row names the version it was built from (when it is among the newest 50).
      return h("tr", { "data-build": b.id, "data-version": b.versionId || "" },
        h("td", {}, b.versionId ? h("b", { class: "build-version" }, b.versionId) : null,
          b.versionId ? " · " : null, when(b.createdAt)),
        h("td", {}, t(`build.${b.state}`) + (b.published ? ` · ${t("deploy.live")}` : "")),
        h("td", {}, b.error ? h("pre", { tabindex: "0" }, `${b.error}\n${b.logTail}`) : `${(b.seconds || 0).toFixed(1)} s`),
        h("td", { class: "build-checks", title: tallyLabel(b.checks) },
          h("span", { "aria-hidden": "true" }, tallyShort(b.checks)), h("span", { class: "visually-hidden" }, tallyLabel(b.checks))),
        h("td", {}, canRollBack ? h("div", { class: "row" },
          h("button", { class: "secondary rollback",
                        onclick: (e) => rollback(b.id, too && too.checked ? b.versionId : null, e.currentTarget) }, t("deploy.rollback")),
          too ? h("label", { class: "small restore-too-label" }, too, " ", t("deploy.restoreToo", { version: b.versionId })) : null) : ""));
    });
    const head = [h("h3", {}, t("deploy.title"))];
    if (latest && latest.state === "failed") head.push(h("p", { class: "status failed", id: "deploy-status" }, t("deploy.failed")));
    if (app.deployUrl) {
      head.push(h("div", { class: "row" }, h("a", { href: app.deployUrl, target: "_blank", rel: "noopener", id: "deploy-url" }, app.deployUrl),
        h("button", { class: "secondary", onclick: async () => { await navigator.clipboard.writeText(app.deployUrl); notify(t("deploy.copied")); } }, t("deploy.copy")),
        h("button", { class: "secondary", onclick: () => window.open(app.deployUrl, "_blank", "noopener") }, t("deploy.open"))));
    }
    if (rows.length > 1) head.push(h("p", { class: "small", id: "rollback-note" }, t("deploy.rollbackNote")));
    panel.replaceChildren(...head, table([t("deploy.build"), t("deploy.stateHead"), t("deploy.time"), t("deploy.checks"), t("deploy.actions")], rows));
  }
  // A rollback says at once that it is under way (the button busy, every rollback button
  // off until it answers), then that it is done.
  async function rollback(buildId, versionId, button) {
    const buttons = [...panel.querySelectorAll("button.rollback")];
    buttons.forEach((b) => { b.disabled = true; });
    if (button) { button.textContent = t("deploy.rollingBack"); button.setAttribute("aria-busy", "true"); }
    notify(t("deploy.rollingBack"));
    try {
      app = await api("POST", `/api/apps/${appId}/rollback`, { buildId });
      notify(t("deploy.rolledBack"));
      await showBuilds();
    } catch (err) {
      buttons.forEach((b) => { b.disabled = false; });
      if (button) { button.textContent = t("deploy.rollback"); button.removeAttribute("aria-busy"); }
      report(err);
      return;
    }
    if (versionId) await restore(versionId);
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

  // -- what the AI sees: a panel of its own, closable, beside the deploy panel ------------
  function closeContext() {
    contextPanel.hidden = true;
    contextButton.setAttribute("aria-expanded", "false");
  }
  async function context() {
    try {
      const w = await api("GET", `/api/apps/${appId}/context`);
      contextPanel.hidden = false;
      contextButton.setAttribute("aria-expanded", "true");
      const total = t("context.total", { n: w.messages.length, tokens: w.totalTokens }) +
        (w.evictedUnits ? t("context.evicted", { n: w.evictedUnits }) : "") +
        (w.elidedPayloads ? t("context.elided", { n: w.elidedPayloads }) : "");
      contextPanel.replaceChildren(
        h("div", { class: "panel-head" }, h("h3", { id: "context-title" }, t("context.title")),
          h("button", { type: "button", class: "secondary close", id: "context-close",
                        "aria-label": t("panel.close"), title: t("panel.close"), onclick: closeContext }, "×")),
        h("p", { id: "context-total" }, total),
        table([t("context.role"), t("context.tokens"), t("context.content")],
          w.messages.map((m, i) => h("tr", {}, h("td", {}, m.role), h("td", {}, String(w.tokens[i] ?? "")),
            h("td", {}, h("pre", { tabindex: "0" }, (m.content || "") + (m.tool_calls ? "\n" + m.tool_calls.map((c) => `→ ${c.function.name}(${c.function.arguments.slice(0, 200)})`).join("\n") : "")))))));
    } catch (err) { report(err); }
  }
  contextButton.addEventListener("click", () => (contextPanel.hidden ? context() : closeContext()));

  // -- rename and delete (the owner's own app) ----------------------------------------------
  const nameEl = h("h2", { id: "app-name" }, app.name);
  const titleRow = h("div", { class: "row app-title" });
  function showTitle() {
    titleRow.replaceChildren(nameEl, h("span", { class: "small" }, app.codeGenType),
      h("button", { class: "secondary small-button", id: "rename", type: "button", onclick: startRename }, t("app.rename")),
      h("button", { class: "danger small-button", id: "delete", type: "button", onclick: remove }, t("app.delete")));
  }
  function startRename() {
    const field = h("input", { id: "rename-input", value: app.name, maxlength: "60", "aria-label": t("app.renameLabel") });
    const form = h("form", { class: "row rename", onsubmit: async (e) => {
      e.preventDefault();
      if (!field.value.trim()) { notify(blank("name"), true); field.focus(); return; }
      try {
        app = await api("PATCH", `/api/apps/${appId}`, { name: field.value });
        nameEl.textContent = app.name;
        showTitle();
        notify(t("app.renamed", { name: app.name }));
      } catch (err) { report(err); }
    } }, field, h("button", { type: "submit", id: "rename-save" }, t("app.save")),
       h("button", { type: "button", class: "secondary", onclick: showTitle }, t("app.cancel")));
    titleRow.replaceChildren(form);
    field.focus();
    field.select();
  }
  async function remove() {
    if (!confirm(t("app.confirmDelete", { name: app.name }))) return;
    try {
      await api("DELETE", `/api/apps/${appId}`);
      sessionStorage.removeItem(`zc_start_${appId}`);
      flash(t("app.deleted", { name: app.name }));
      location.hash = "#/";
    } catch (err) { report(err); }
  }
  showTitle();

  // -- the page ---------------------------------------------------------------------------
  const offlineSlot = h("div", { class: "offline-slot" });
  health().then((info) => {
    if (!info || !info.offlineModel) return;
    const hint = foldingNotice("offline-chat", t("offline.chatSummary"), h("p", {}, t("offline.chatMore"), " ",
      t("offline.chatTry"), " ", h("button", { type: "button", class: "secondary example", onclick: () => {
        input.value = t("offline.change"); inputCount.update(); input.focus();
      } }, t("offline.change"))));
    hint.classList.add("small");
    offlineSlot.replaceChildren(hint);
  });

  const chatSection = h("section", { class: "chat", "aria-label": t("phone.chat") }, titleRow, messages, offlineSlot,
    h("div", { class: "composer" }, chipSlot, input, h("div", { class: "row" }, send, stopButton,
      h("span", { class: "small", id: "send-hint" }, t("app.sendHint")), inputCount)));
  const previewSection = h("section", { class: "preview", "aria-label": t("phone.preview") },
    h("div", { class: "toolbar" }, h("div", { class: "tabs", role: "tablist", "aria-label": t("app.tabs") }, tabs),
      editButton, deployButton,
      h("button", { class: "secondary", onclick: download }, t("app.download")), contextButton,
      h("a", { href: app.previewUrl, target: "_blank", rel: "noopener" }, t("app.openPreview"))),
    panel, contextPanel, previewPane, code.el, versions.el, checks.el);
  const workspace = h("div", { class: "workspace" });
  const phone = phoneSwitch(workspace, chatSection, previewSection);
  workspace.append(phone.el, chatSection, previewSection);
  input.setAttribute("aria-describedby", "send-hint");
  view.replaceChildren(workspace);
  if (!openVersion) focusNext(input);  // after Create too: the next message, while the first turn runs
  const others = otherTabs(appId, { api, alive: () => messages.isConnected, idle: () => !busy(),
    follow: reattach, catchUp: caughtUp });
  // Opening (a reload too): the history, whether a turn runs, whether a preview was built.
  // A turn that ended between the two answers is in the history whole: not followed again.
  const start = sessionStorage.getItem(`zc_start_${appId}`);
  const [entries, current, built, shown] = await Promise.all([loadHistory(false),
    api("GET", `/api/apps/${appId}/turns/current`).catch(() => null), previewBuilt(appId).catch(() => true),
    api("GET", `/api/apps/${appId}/preview`).catch(() => null)]);
  if (shown) heard(shown.buildId);  // before the frame's address: what it shows, or older
  const answered = (turn) => entries.some((e) => e.turn === turn && e.role !== "user");
  const runs = current && !answered(current.turn) ? current.turn : null;
  const starting = Boolean(start && !entries.length && !runs);
  hasPreview = hasPreview || built;
  if (hasPreview) loadFrame(false); else showPlaceholder(Boolean(runs || starting));
  if (start && (entries.length || runs)) sessionStorage.removeItem(`zc_start_${appId}`);
  if (runs) reattach(runs);
  else if (starting) { sessionStorage.removeItem(`zc_start_${appId}`); chat(start, null, false); }
  else checkPreview();
  if (app.deployUrl) { panel.hidden = false; showBuilds().catch(report); }
  if (openVersion) showTab("versions", openVersion);  // #/apps/{id}/versions/{v}: a diff link
}

// -- admin --------------------------------------------------------------------------------------

async function admin(tab) {
  if (!me || me.role !== "admin") { view.replaceChildren(h("p", {}, t("admin.only"))); return; }
  const body = h("div", { class: "admin" });
  const tabs = h("div", { class: "tabs" },
    h("a", { href: "#/admin/apps", class: tab === "users" ? "" : "active" }, t("admin.apps")),
    h("a", { href: "#/admin/users", class: tab === "users" ? "active" : "" }, t("admin.users")));
  view.replaceChildren(tabs, body);
  const search = h("input", { type: "search", placeholder: t("admin.search"), "aria-label": t("admin.search") });
  const rows = h("tbody");
  const heads = tab === "users"
    ? [t("admin.account"), t("admin.name"), t("admin.role"), t("admin.created"), t("admin.failedLogins")]
    : [t("admin.name"), t("admin.owner"), t("admin.created"), t("admin.featured"), t("admin.actions")];
  // Each cell carries its column's name: on a phone the rows become cards (style.css).
  const labelled = (row) => {
    [...row.children].forEach((td, i) => td.setAttribute("data-label", heads[i]));
    return row;
  };
  const grid = h("div", { class: "table-wrap" }, h("table", { class: "cards", id: `admin-${tab === "users" ? "users" : "apps"}` },
    h("thead", {}, h("tr", {}, heads.map((x) => h("th", { scope: "col" }, x)))), rows));
  const more = h("button", { class: "secondary", hidden: true }, t("home.more"));
  let cursor = null;
  async function load(reset) {
    const params = new URLSearchParams({ limit: "20" });
    if (!reset && cursor) params.set("cursor", cursor);
    if (search.value.trim()) params.set("q", search.value.trim());
    try {
      if (tab === "users") {
        const page = await api("GET", `/api/admin/users?${params}`);
        if (reset) rows.replaceChildren();
        rows.append(...page.users.map((u) => labelled(h("tr", { "data-user": u.id }, h("td", {}, u.account), h("td", {}, u.name),
          h("td", {}, u.role), h("td", {}, when(u.createdAt)), h("td", {}, String(u.failedLogins))))));
        cursor = page.nextCursor;
      } else {
        const page = await api("GET", `/api/admin/apps?${params}`);
        if (reset) rows.replaceChildren();
        rows.append(...page.apps.map(adminAppRow));
        cursor = page.nextCursor;
      }
      more.hidden = !cursor;
    } catch (err) { report(err); }
  }
  function adminAppRow(a) {
    const row = h("tr", { "data-app": a.id });
    const featured = a.priority >= 99;
    row.append(h("td", {}, h("a", { href: `#/apps/${a.id}` }, a.name)),
      h("td", { class: "owner", title: a.owner }, a.ownerAccount || "—"),
      h("td", { class: "small" }, when(a.createdAt)),
      h("td", {}, featured ? t("admin.featured") : ""),
      h("td", {}, h("div", { class: "row" },
        h("button", { class: "secondary", onclick: async () => {
          try { await api("PATCH", `/api/admin/apps/${a.id}`, { priority: featured ? 0 : 99 }); load(true); } catch (err) { report(err); } } },
          featured ? t("admin.unfeature") : t("admin.feature")),
        h("button", { class: "secondary", onclick: async () => {
          const name = prompt(t("admin.newName"), a.name);
          if (!name) return;
          try { await api("PATCH", `/api/admin/apps/${a.id}`, { name }); load(true); } catch (err) { report(err); } } }, t("admin.rename")),
        h("button", { class: "secondary", onclick: () => showHistory(a) }, t("admin.history")),
        h("button", { class: "danger", onclick: async () => {
          if (!confirm(t("admin.confirmDelete", { name: a.name }))) return;
          try { await api("DELETE", `/api/admin/apps/${a.id}`); load(true); } catch (err) { report(err); } } }, t("admin.delete")))));
    return labelled(row);
  }
  async function showHistory(a) {
    try {
      const page = await api("GET", `/api/apps/${a.id}/history?limit=50`);
      const box = h("div", { class: "panel" }, h("div", { class: "row" }, h("h3", {}, t("admin.historyOf", { name: a.name })),
        h("button", { class: "danger", onclick: async () => {
          if (!confirm(t("admin.confirmClear"))) return;
          try { await api("DELETE", `/api/admin/apps/${a.id}/history`); box.remove(); notify(t("admin.historyCleared")); } catch (err) { report(err); } } }, t("admin.clearHistory")),
        h("button", { class: "secondary close", "aria-label": t("panel.close"), title: t("panel.close"), onclick: () => box.remove() }, "×")),
        page.entries.map((e) => h("p", {}, h("b", {}, `${t(`role.${e.role}`)} (${e.status}) `), e.content.slice(0, 400))));
      body.prepend(box);
    } catch (err) { report(err); }
  }
  search.addEventListener("input", () => { clearTimeout(load.t); load.t = setTimeout(() => load(true), 250); });
  more.addEventListener("click", () => load(false));
  // The table's box scrolls: focusable, so the keyboard scrolls it too.
  const box = h("div", { class: "panel", role: "region", tabindex: "0",
                         "aria-label": tab === "users" ? t("admin.users") : t("admin.apps") }, grid);
  body.append(search, box, more);
  load(true);
}

// -- routing ------------------------------------------------------------------------------------

async function route() {
  window.onmessage = null;
  document.onkeydown = null;
  clearToast();  // an error belongs to the page it happened on
  if (flashed) { notify(flashed); flashed = null; }
  const path = location.hash.slice(1) || "/";
  if (!me && token()) await loadMe();
  renderNav();
  drawStorage();  // in the language just chosen
  if (path === "/login") return authForm("login");
  if (path === "/register") return authForm("register");
  if (!me) { location.hash = "#/login"; return; }
  const appMatch = path.match(/^\/apps\/([a-z0-9]{20})(?:\/versions\/(v[1-9][0-9]*))?$/);
  if (appMatch) return appPage(appMatch[1], appMatch[2] || null);
  if (path.startsWith("/admin")) return admin(path.endsWith("/users") ? "users" : "apps");
  return home();
}

window.addEventListener("hashchange", () => route().catch(report));
route().catch(report);
checkStorage();
setInterval(checkStorage, STORAGE_CHECK_MS);
