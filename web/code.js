// The app page's Code and Versions tabs: the current files as a tree with a read-only,
// highlighted viewer, and the versions (newest first) with each one's changes and a restore.
// Highlighting is done by the API (Pygments, CSS classes under .hl; web/style.css colours
// them); the markup is still checked here before it is shown (sanitized below).

import { t } from "./i18n.js";
import { h, when } from "./render.js";

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

export function codeView(appId, { api, report }) {
  const treeSlot = h("div", { class: "tree-slot" });
  const viewer = h("div", { class: "viewer", id: "code-viewer" }, h("p", { class: "small" }, t("code.pick")));
  const el = h("div", { class: "code-view", id: "code-view" }, treeSlot, viewer);
  let selected = null;

  async function open(path) {
    selected = path;
    treeSlot.querySelectorAll("button.file").forEach((b) => b.classList.toggle("selected", b.dataset.path === path));
    viewer.replaceChildren(h("p", { class: "small" }, t("code.loading")));
    try {
      const code = await api("GET", `/api/apps/${appId}/code/${pathUrl(path)}`);
      viewer.replaceChildren(h("div", { class: "viewer-head" }, h("b", { id: "code-path" }, code.path),
        h("span", { class: "small" }, code.language || "")), safeMarkup(code.html));
    } catch (err) { viewer.replaceChildren(); report(err); }
  }

  async function refresh() {
    try {
      const { files } = await api("GET", `/api/apps/${appId}/files`);
      if (!files.length) {
        treeSlot.replaceChildren(h("p", { class: "small" }, t("code.none")));
        viewer.replaceChildren();
        return;
      }
      treeSlot.replaceChildren(tree(files, open));
      const keep = files.find((f) => f.path === selected);
      const first = keep || files.find((f) => f.path === "index.html") ||
        files.find((f) => f.path === "src/App.vue") || files[0];
      await open(first.path);
    } catch (err) { report(err); }
  }
  return { el, refresh };
}

// One file's changes in a version.
function fileDiff(file) {
  const status = h("span", { class: `change ${file.status}` }, t(`versions.${file.status}`));
  let body;
  if (file.binary) body = h("p", { class: "small" }, t("versions.binary"));
  else if (file.html) body = safeMarkup(file.html);
  else body = h("pre", { tabindex: "0" }, file.diff || "");
  return h("details", { class: "file-diff", open: true, "data-path": file.path },
    h("summary", {}, h("code", {}, file.path), " ", status), body);
}

export function versionsView(appId, { api, report, restore, busy }) {
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
        ...(d.files.length ? d.files.map(fileDiff) : [h("p", { class: "small" }, t("versions.noDiff"))]));
    } catch (err) { diff.replaceChildren(); report(err); }
  }

  function item(v) {
    const restoreButton = v.current ? null : h("button", { class: "secondary restore", type: "button",
      disabled: busy(), onclick: () => restore(v.id) }, t("versions.restore"));
    return h("li", { "data-version": v.id, class: v.current ? "current" : "" },
      h("div", { class: "row" }, h("b", {}, v.id),
        v.current ? h("span", { class: "badge" }, t("versions.current")) : null,
        v.kind === "restore" && v.restoredFrom ? h("span", { class: "small" }, t("versions.restoredFrom", { version: v.restoredFrom })) : null,
        h("span", { class: "small" }, `${when(v.createdAt)} · ${(v.files === 1 ? t("versions.file") : t("versions.files", { n: v.files }))}`)),
      h("div", { class: "summary" }, v.summary || ""),
      h("div", { class: "row" },
        h("button", { class: "secondary changes", type: "button", onclick: () => showDiff(v) }, t("versions.changes")),
        restoreButton));
  }

  async function load(reset) {
    const params = new URLSearchParams({ limit: "20" });
    if (!reset && cursor) params.set("cursor", cursor);
    try {
      const page = await api("GET", `/api/apps/${appId}/versions?${params}`);
      if (reset) { list.replaceChildren(); diff.replaceChildren(); }
      list.append(...page.versions.map(item));
      if (!list.children.length) list.append(h("li", { class: "small" }, t("versions.none")));
      cursor = page.nextCursor;
      more.hidden = !cursor;
      if (reset && page.versions.length) await showDiff(page.versions[0]);
    } catch (err) {
      // A platform that keeps no versions says so (404): that is the pane's content.
      if (err.status === 404 && reset) list.replaceChildren(h("li", { class: "small" }, err.message));
      else report(err);
    }
  }
  more.addEventListener("click", () => load(false));

  function setBusy(on) { list.querySelectorAll("button.restore").forEach((b) => { b.disabled = on; }); }
  return { el, refresh: () => load(true), setBusy };
}
