// The app page's Code and Versions tabs: the current files as a tree with an editor of the
// chosen one (CodeMirror from the platform's bundle, or a plain text area: codeedit.js), and
// the versions (newest first) with each one's changes and a restore. A version's changes are
// highlighted by the API (Pygments, CSS classes under .hl; web/style.css colours them); that
// markup is still checked here before it is shown (sanitized below).

import { t } from "./i18n.js";
import { h, when } from "./render.js";
import { announce } from "./layout.js";
import { copyText, darkTheme, downloadFile, languageName, makeEditor } from "./codeedit.js";

// Only the elements and attributes a highlighter's markup has: anything else is shown as text.
const ALLOWED = new Set(["DIV", "PRE", "SPAN", "CODE", "TABLE", "TBODY", "TR", "TD", "A", "BR"]);

export function safeMarkup(html) {
  const doc = new DOMParser().parseFromString(`<div>${html}</div>`, "text/html");
  const root = doc.body.firstElementChild;
  for (const el of [...root.querySelectorAll("*")]) {
    if (!ALLOWED.has(el.tagName)) { el.replaceWith(doc.createTextNode(el.textContent)); continue; }
    for (const attr of [...el.attributes]) {
      if (attr.name !== "class") el.removeAttribute(attr.name);
    }
  }
  const out = document.createElement("div");
  out.className = "code-html";
  out.tabIndex = 0;  // it scrolls: the keyboard must reach it
  out.append(...document.importNode(root, true).childNodes);
  return out;
}

function pathUrl(path) { return path.split("/").map(encodeURIComponent).join("/"); }

// The files as nested folders (open) and file buttons.
function tree(files, onPick) {
  const rootDir = { dirs: new Map(), files: [] };
  for (const f of files) {
    const parts = f.path.split("/");
    let dir = rootDir;
    for (const part of parts.slice(0, -1)) {
      if (!dir.dirs.has(part)) dir.dirs.set(part, { dirs: new Map(), files: [] });
      dir = dir.dirs.get(part);
    }
    dir.files.push({ ...f, name: parts[parts.length - 1] });
  }
  function list(dir) {
    const items = [...dir.dirs.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, sub]) =>
      h("li", { class: "dir" }, h("details", { open: true }, h("summary", {}, `${name}/`), list(sub))));
    items.push(...dir.files.sort((a, b) => a.name.localeCompare(b.name)).map((f) =>
      h("li", {}, h("button", { type: "button", class: "file", "data-path": f.path,
                               title: t("code.size", { n: f.size }), onclick: () => onPick(f.path) },
        f.name))));
    return h("ul", {}, items);
  }
  return h("nav", { class: "tree", "aria-label": t("code.files") }, list(rootDir));
}

// Drafts: what was typed and not saved, per file, kept in this browser tab's sessionStorage
// with the ETag the text was loaded with. Leaving a file, a tab or the page (a reload too)
// keeps them; Save or Discard ends one.
function draftKey(appId, path) { return `zc_draft_${appId}:${path}`; }
function readDraft(appId, path) {
  try { return JSON.parse(sessionStorage.getItem(draftKey(appId, path)) || "null"); } catch (_) { return null; }
}
function writeDraft(appId, path, draft) {
  try {
    if (draft) sessionStorage.setItem(draftKey(appId, path), JSON.stringify(draft));
    else sessionStorage.removeItem(draftKey(appId, path));
  } catch (_) { /* storage full or off: the draft lives while the page does */ }
}

// The opaque tag of an ETag header ("W/" and quotes off): the file's SHA-256, hex.
function tagOf(header) { return header ? header.replace(/^W\//, "").replace(/"/g, "") : null; }

async function sha256(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

// The Code tab: the file tree and an editor of the chosen file. Save (Ctrl/Cmd+S) PUTs the
// whole text with the ETag it was loaded with; the platform makes a version of it ("edited by
// hand") and rebuilds the preview, and `onSaved` lets the page follow (the frame, the chat's
// note, the versions).
export function codeView(appId, { api, raw, report, explain, busy, busyChanged, onSaved, loadImage }) {
  const treeSlot = h("div", { class: "tree-slot" });
  const viewer = h("div", { class: "viewer", id: "code-viewer" }, h("p", { class: "small" }, t("code.pick")));
  const el = h("div", { class: "code-view", id: "code-view" }, treeSlot, viewer);
  // The open file: path, tag (its ETag when loaded or last saved), saved (that text), editor.
  let current = null, selected = null, saving = false, opening = 0, files = [];
  const saveButton = h("button", { type: "button", id: "code-save", disabled: true }, t("code.save"));
  const discardButton = h("button", { type: "button", class: "secondary", id: "code-discard", disabled: true }, t("code.discard"));
  const copyButton = h("button", { type: "button", class: "secondary", id: "code-copy" }, t("code.copy"));
  const downloadButton = h("button", { type: "button", class: "secondary", id: "code-download" }, t("code.download"));
  const status = h("div", { class: "code-status small", id: "code-status" });

  function dirty() { return Boolean(current && current.editor && current.editor.getDoc() !== current.saved); }
  function showState() {
    const changed = dirty();
    saveButton.disabled = !changed || saving || busy();
    discardButton.disabled = !changed || saving;
    viewer.classList.toggle("unsaved", changed);
    const mark = treeSlot.querySelector(`button.file[data-path="${CSS.escape(selected || "")}"]`);
    if (mark) mark.classList.toggle("draft", changed);
  }
  function say(text, { kind = "", reload = false } = {}) {
    status.dataset.kind = kind;
    if (!text) { status.replaceChildren(); return; }
    status.replaceChildren(h("span", {}, text), reload
      ? h("button", { type: "button", class: "secondary small-button", id: "code-reload", onclick: reloadFile }, t("code.reload"))
      : "");
    announce(text);
  }

  // The open file's draft stored (or dropped when the text is the file's): a moment after
  // typing stops, and at once before the file is left.
  function keepDraft() {
    clearTimeout(keepDraft.timer);
    if (!current || !current.editor) return;
    const doc = current.editor.getDoc();
    writeDraft(appId, current.path, doc === current.saved ? null : { base: current.tag, doc });
  }
  function edited() {
    clearTimeout(keepDraft.timer);
    keepDraft.timer = setTimeout(keepDraft, 300);
    showState();
  }

  // The file's bytes and tag; text when it is UTF-8, else null (a binary file).
  async function fetchFile(path) {
    const response = await raw("GET", `/api/apps/${appId}/files/${pathUrl(path)}`);
    const bytes = await response.arrayBuffer();
    let text = null;
    try { text = new TextDecoder("utf-8", { fatal: true }).decode(bytes); } catch (_) { /* binary */ }
    return { bytes, text, tag: tagOf(response.headers.get("ETag")) };
  }

  async function open(path) {
    const again = current && current.path === path;
    const mine = ++opening;
    selected = path;
    treeSlot.querySelectorAll("button.file").forEach((b) => b.classList.toggle("selected", b.dataset.path === path));
    if (!again) viewer.replaceChildren(h("p", { class: "small" }, t("code.loading")));
    let file;
    try { file = await fetchFile(path); } catch (err) {
      if (mine === opening && !again) viewer.replaceChildren();
      report(err);
      return;
    }
    if (mine !== opening) return;  // another file was picked meanwhile
    const draft = file.text === null ? null : readDraft(appId, path);
    if (again && current.editor) {
      // Shown already (back from another tab, or a turn ended): a clean editor takes the
      // file as it is now; one with changes keeps them and says when the file moved on.
      if (!dirty()) {
        if (file.text !== null && file.text !== current.saved) current.editor.setDoc(file.text);
        current.saved = file.text; current.tag = file.tag;
      } else if (current.tag !== file.tag) say(t("code.movedOn"), { kind: "error", reload: true });
      showState();
      return;
    }
    if (current && current.editor) { keepDraft(); current.editor.destroy(); }
    current = { path, tag: file.tag, saved: file.text, bytes: file.bytes, editor: null };
    const head = h("div", { class: "viewer-head" }, h("b", { id: "code-path" }, path),
      h("span", { class: "small", id: "code-language" }),
      h("span", { class: "small unsaved-mark" }, t("code.unsaved")),
      h("div", { class: "row code-actions" }, saveButton, discardButton, copyButton, downloadButton));
    say("");
    if (file.text === null) {
      copyButton.disabled = true; saveButton.disabled = true; discardButton.disabled = true;
      viewer.replaceChildren(head, status,
        assetPicture(appId, path, loadImage) || h("p", { class: "small" }, t("code.binary")));
      return;
    }
    copyButton.disabled = false;
    const host = h("div", { class: "editor-host", id: "code-editor" });
    viewer.replaceChildren(head, status, host);
    const editor = await makeEditor(host, {
      doc: draft ? draft.doc : file.text, path, label: t("code.editorLabel", { path }),
      onChange: edited, onSave: save,
    });
    if (mine !== opening || current.path !== path) { editor.destroy(); return; }
    current.editor = editor;
    head.querySelector("#code-language").textContent = languageName(editor.language);
    if (editor.plain) host.after(h("p", { class: "small", id: "code-plain-note" }, t("code.plainNote")));
    if (draft) say(draft.base === file.tag ? t("code.draftKept") : t("code.movedOn"),
                   { kind: draft.base === file.tag ? "" : "error", reload: draft.base !== file.tag });
    showState();
  }

  // The file as it is now, the draft dropped (after a 409/412, or asked for).
  async function reloadFile() {
    if (!current) return;
    clearTimeout(keepDraft.timer);
    writeDraft(appId, current.path, null);
    const path = current.path;
    if (current.editor) current.editor.destroy();
    current = null;
    await open(path);
    say(t("code.reloaded"));
  }

  async function save() {
    if (!current || !current.editor || saving || busy() || !dirty()) return;
    const { path } = current, doc = current.editor.getDoc();
    saving = true;
    busyChanged();
    say(t("code.saving"), { kind: "pending" });
    try {
      const headers = current.tag ? { "If-Match": `"${current.tag}"` } : {};
      const response = await raw("PUT", `/api/apps/${appId}/files/${pathUrl(path)}`, { body: { content: doc }, headers });
      const result = await response.json();
      const tag = tagOf(response.headers.get("ETag")) || await sha256(doc);
      if (current && current.path === path) { current.saved = doc; current.tag = tag; }
      keepDraft();
      showState();
      // The page follows first (on AWS the build may still be running: it waits for its end).
      const changed = Boolean(result.changed && result.changed.length);
      const build = (changed && onSaved ? await onSaved(result) : null) || result.build;
      if (!changed) say(t("code.same"));
      else if (!build) say(t("code.saved", { version: result.version.id }), { kind: "ok" });
      else if (build.state === "succeeded") say(t("code.savedBuilt", { version: result.version.id }), { kind: "ok" });
      else say(t("code.savedFailed", { version: result.version.id, why: build.error || t("build.failed") }), { kind: "error" });
    } catch (err) {
      if (err.code === "file_changed" || err.status === 412) say(t("code.stale"), { kind: "error", reload: true });
      else if (err.status === 409) say(t("code.busy", { message: err.message }), { kind: "error", reload: true });
      else say(t("code.notSaved", { why: explain(err) }), { kind: "error" });
    } finally {
      saving = false;
      busyChanged();
    }
  }
  saveButton.addEventListener("click", save);
  discardButton.addEventListener("click", () => { if (confirm(t("code.confirmDiscard", { path: current.path }))) reloadFile(); });
  copyButton.addEventListener("click", async () => {
    if (!current || !current.editor) return;
    try { await copyText(current.editor.getDoc()); say(t("code.copied", { path: current.path })); } catch (err) { report(err); }
  });
  downloadButton.addEventListener("click", () => {
    if (current) downloadFile(current.path, current.editor ? current.editor.getDoc() : current.bytes);
  });

  // Dark mode follows the console's theme (layout.js sets <html data-theme>).
  const themeWatch = new MutationObserver(() => {
    if (!el.isConnected) { themeWatch.disconnect(); return; }
    if (current && current.editor) current.editor.setDark(darkTheme());
  });
  themeWatch.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });

  async function refresh() {
    try {
      ({ files } = await api("GET", `/api/apps/${appId}/files`));
      if (!files.length) {
        treeSlot.replaceChildren(h("p", { class: "small" }, t("code.none")));
        if (current && current.editor) { keepDraft(); current.editor.destroy(); }
        current = null;
        viewer.replaceChildren();
        return;
      }
      treeSlot.replaceChildren(tree(files, open));
      for (const f of files) {
        if (readDraft(appId, f.path)) treeSlot.querySelector(`button.file[data-path="${CSS.escape(f.path)}"]`).classList.add("draft");
      }
      const keep = files.find((f) => f.path === selected);
      const first = keep || files.find((f) => f.path === "index.html") ||
        files.find((f) => f.path === "src/App.vue") || files[0];
      if (!keep && current) { if (current.editor) { keepDraft(); current.editor.destroy(); } current = null; }
      await open(first.path);
    } catch (err) { report(err); }
  }
  return { el, refresh, setBusy: showState, saving: () => saving };
}

// An image of the app's assets folder (issue 41): shown as a picture, not as "binary".
const ASSET = /^(?:public\/)?assets\/([^/]+\.(?:png|jpe?g|webp|gif|avif|ico))$/;
function assetPicture(appId, path, loadImage, version = null) {
  const found = ASSET.exec(path);
  if (!found || !loadImage) return null;
  const img = h("img", { class: "asset-view", alt: path });
  const query = version ? `?version=${encodeURIComponent(version)}` : "";
  loadImage(`/api/apps/${appId}/assets/${encodeURIComponent(found[1])}${query}`)
    .then((url) => { img.src = url; }).catch(() => { img.alt = t("versions.binary"); });
  return img;
}

// One file's changes in a version (an image of the assets folder, as that version has it).
function fileDiff(file, picture) {
  const status = h("span", { class: `change ${file.status}` }, t(`versions.${file.status}`));
  let body;
  const shown = file.binary && file.status !== "deleted" ? picture(file.path) : null;
  if (shown) body = shown;
  else if (file.binary) body = h("p", { class: "small" }, t("versions.binary"));
  else if (file.html) body = safeMarkup(file.html);
  else body = h("pre", { tabindex: "0" }, file.diff || "");
  return h("details", { class: "file-diff", open: true, "data-path": file.path },
    h("summary", {}, h("code", {}, file.path), " ", status), body);
}

export function versionsView(appId, { api, report, restore, busy, loadImage }) {
  const list = h("ol", { class: "versions", id: "versions" });
  const more = h("button", { class: "secondary", hidden: true }, t("home.more"));
  const diff = h("div", { class: "diff", id: "version-diff" });
  const el = h("div", { class: "versions-view", id: "versions-view" },
    h("div", { class: "versions-list" }, list, more), diff);
  let cursor = null;

  async function showDiff(version) {
    list.querySelectorAll("li").forEach((li) => li.classList.toggle("selected", li.dataset.version === version.id));
    diff.replaceChildren(h("p", { class: "small" }, t("code.loading")));
    try {
      const d = await api("GET", `/api/apps/${appId}/versions/${version.id}/diff`);
      const title = d.against
        ? t("versions.diffAgainst", { version: d.version, against: d.against })
        : t("versions.diffFirst", { version: d.version });
      diff.replaceChildren(h("h3", { id: "diff-title" }, title),
        ...(d.files.length ? d.files.map((f) => fileDiff(f, (path) => assetPicture(appId, path, loadImage, d.version)))
          : [h("p", { class: "small" }, t("versions.noDiff"))]));
    } catch (err) { diff.replaceChildren(); report(err); }
  }

  function item(v) {
    const restoreButton = v.current ? null : h("button", { class: "secondary restore", type: "button",
      disabled: busy(), onclick: () => restore(v.id) }, t("versions.restore"));
    return h("li", { "data-version": v.id, class: v.current ? "current" : "" },
      h("div", { class: "row" }, h("b", {}, v.id),
        v.current ? h("span", { class: "badge" }, t("versions.current")) : null,
        v.kind === "restore" && v.restoredFrom ? h("span", { class: "small" }, t("versions.restoredFrom", { version: v.restoredFrom })) : null,
        v.kind === "edit" ? h("span", { class: "small by-hand" }, t("versions.byHand")) : null,
        h("span", { class: "small" }, `${when(v.createdAt)} · ${(v.files === 1 ? t("versions.file") : t("versions.files", { n: v.files }))}`)),
      h("div", { class: "summary" }, v.summary || ""),
      h("div", { class: "row" },
        h("button", { class: "secondary changes", type: "button", onclick: () => showDiff(v) }, t("versions.changes")),
        restoreButton));
  }

  // `open`: the version whose changes to show (a chat reply's diff link), else the newest.
  async function load(reset, open = null) {
    const params = new URLSearchParams({ limit: "20" });
    if (!reset && cursor) params.set("cursor", cursor);
    try {
      const page = await api("GET", `/api/apps/${appId}/versions?${params}`);
      if (reset) { list.replaceChildren(); diff.replaceChildren(); }
      list.append(...page.versions.map(item));
      if (!list.children.length) list.append(h("li", { class: "small" }, t("versions.none")));
      cursor = page.nextCursor;
      more.hidden = !cursor;
      if (reset && (open || page.versions.length)) await showDiff(open ? { id: open } : page.versions[0]);
    } catch (err) {
      // A platform that keeps no versions says so (404): that is the pane's content.
      if (err.status === 404 && reset) list.replaceChildren(h("li", { class: "small" }, err.message));
      else report(err);
    }
  }
  more.addEventListener("click", () => load(false));

  function setBusy(on) { list.querySelectorAll("button.restore").forEach((b) => { b.disabled = on; }); }
  return { el, refresh: (open) => load(true, open), setBusy };
}
