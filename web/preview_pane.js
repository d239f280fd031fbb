// The app page's preview pane: the frame (the app's own origin, sandboxed), or a placeholder
// until the first preview build succeeds; which build it shows; Edit mode's picks and text
// edits (the picker in the frame talks by postMessage); the stale notice and Rebuild.
// Made with the page's shared state (`page`, app_page.js).

import { t } from "./i18n.js";
import { h } from "./render.js";
import { announce, narrow } from "./layout.js";
import { editMode } from "./keyboard.js";
import { ApiError } from "./messages.js";
import { api, notify, report } from "./api.js";
import { pickedElement } from "./events.js";

export function makePreview(page) {
  const { appId, chipSlot, input, inputCount } = page;
  // A preview with an origin of its own (p-{key}.localhost, or p-{key}.{sitesDomain}) is on
  // another site than this page, so its scripts reach neither this page nor its storage, and
  // allow-same-origin gives the page that origin (not this one), which its data API needs (a
  // same-origin Origin on changes, its session cookie: docs/data.md). A preview under the
  // shared path scheme (AWS without a custom domain: one origin for every app) keeps an
  // opaque origin, as before. The sandbox keeps it from navigating this page or opening
  // popups either way. The frame's name tells the picker which origin may command it
  // (picker.js). It gets its address only once a preview build has succeeded.
  const own = ownOrigin(page.app.previewUrl);
  const frame = h("iframe", { id: "preview", title: t("app.tab.preview"), hidden: true,
                              name: `zerocode-console ${location.origin}`,
                              sandbox: own ? "allow-scripts allow-forms allow-same-origin" : "allow-scripts allow-forms" });
  const placeholder = h("div", { class: "placeholder", id: "preview-placeholder", role: "status", hidden: true });
  const editButton = h("button", { class: "secondary", id: "edit", "aria-pressed": "false" }, t("app.edit"));
  const edit = editMode(editButton, frame);  // the builder's wish, paused while the preview changes
  // Over the preview when it is older than the app's files (a turn cut off, a failed build).
  const rebuildButton = h("button", { type: "button", id: "rebuild" }, t("preview.rebuild"));
  const staleNotice = h("div", { class: "notice stale", id: "preview-stale", role: "status", hidden: true },
    h("p", {}, h("b", {}, t("preview.stale")), " ", t("preview.staleWhy")), rebuildButton);

  // -- the preview pane: the frame, or a placeholder until the first build succeeds ----------
  function loadFrame(fresh) {
    placeholder.hidden = true;
    frame.hidden = false;
    page.loadingBuild = page.latestBuild;
    frame.src = fresh ? `${page.app.previewUrl}?t=${Date.now()}` : page.app.previewUrl;
  }
  frame.addEventListener("load", () => {
    if (page.loadingBuild === page.frameBuild) return;  // the same build (another of its pages too)
    page.frameBuild = page.loadingBuild;
    frame.dataset.build = page.frameBuild || "";
    dropPick();
  });
  // A build the console heard of: the preview shows it (or soon will). Build ids grow with
  // time ("b{ms}{hex}"), and the preview only moves on: a late answer naming an older
  // build changes nothing.
  // The origin the preview's messages come from: its own, or the sandbox's opaque "null".
  function previewOrigin() { return own || "null"; }
  function heard(build) { if (build && (!page.latestBuild || build > page.latestBuild)) page.latestBuild = build; }
  function dropPick() { if (page.picked) { page.picked = null; showChip(); } }
  function showPlaceholder(building) {
    frame.hidden = true;
    placeholder.hidden = false;
    placeholder.dataset.state = building ? "building" : "none";
    placeholder.replaceChildren(building ? h("span", { class: "spinner", "aria-hidden": "true" }) : "",
      h("p", {}, building ? t("preview.building") : t("preview.none")));
  }

  function showChip() {
    chipSlot.replaceChildren(page.picked ? h("span", { class: "chip", id: "picked", "data-build": page.picked.buildId },
      `<${page.picked.tag}> ${(page.picked.text || page.picked.src || "").slice(0, 40)}`,
      h("button", { title: t("app.remove"), "aria-label": t("app.removeSelection"),
                    onclick: () => { page.picked = null; showChip(); } }, "×")) : "",
      replaceButton(page.picked));
  }
  // A picked image that is one of the builder's uploads: replaced by an upload, no turn.
  function replaceButton(picked) {
    if (!picked || picked.tag !== "img" || !/^(\.\/)?assets\/[^/]+$/.test(picked.src || "")) return "";
    const file = h("input", { type: "file", accept: "image/*", hidden: true, id: "replace-file" });
    file.addEventListener("change", async () => {
      const chosen = file.files[0];
      if (!chosen) return;
      const element = page.picked;
      page.picked = null; showChip();
      await page.images.replacePicked(element, chosen);
    });
    return h("span", {}, file, h("button", { type: "button", class: "secondary", id: "replace-image",
      onclick: () => file.click() }, t("images.replacePicked")));
  }
  // Only the preview frame's window, from the preview's own origin, may talk to this page;
  // what it says is untrusted input, kept to the fields and sizes the API takes.
  window.onmessage = (e) => {
    if (e.source !== frame.contentWindow || e.origin !== previewOrigin() || !e.data) return;
    if (e.data.zerocode === "ready" && edit.on) edit.tell();
    if (e.data.zerocode === "picked" && edit.active) {
      page.picked = pickedElement(e.data.element, page.frameBuild);
      showChip();
      announce(t("edit.picked", { element: `<${page.picked.tag}> ${page.picked.text.slice(0, 40)}` }));
      if (narrow.matches) page.phone.show("chat", true);  // on a phone: back to the message, chip and all
      input.focus();
    }
    if (e.data.zerocode === "textEdit" && edit.active) saveText(e.data);
    if (e.data.zerocode === "escape") edit.set(false);  // Esc inside the preview
  };
  // A text edited in place in the preview (picker.js): saved without a model turn when the
  // platform finds the one place in the source that writes it; else a model turn is offered,
  // with the element picked and the change asked for in the message box.
  async function saveText(data) {
    const element = pickedElement(data.element, page.frameBuild);
    const newText = typeof data.newText === "string" ? data.newText.slice(0, 2000) : "";
    const where = typeof data.page === "string" ? data.page.slice(0, 300) : "/";
    if (!newText.trim() || page.busy()) { if (page.busy()) notify(t("edit.busy"), true); loadFrame(true); return; }
    page.savingText = true; page.showBusy();
    notify(t("edit.saving"));
    try {
      const result = await api("POST", `/api/apps/${appId}/edits/text`, { element, newText, page: where });
      const build = await page.edited(result);
      const failed = Boolean(build && build.state !== "succeeded");
      notify(t(failed ? "edit.savedBuildFailed" : "edit.saved", { version: result.version.id }), failed);
    } catch (err) {
      loadFrame(true);  // the frame shows the text it had
      if (err instanceof ApiError && err.code === "text_not_editable") {
        page.picked = element;
        showChip();
        input.value = t("edit.askModel", { text: newText });
        inputCount.update();
        if (narrow.matches) page.phone.show("chat", true);
        input.focus();
        notify(t("edit.notEditable", { message: err.message }), true);
      } else {
        if (err instanceof ApiError && err.code === "preview_out_of_date") checkPreview();
        report(err);
      }
    } finally { page.savingText = false; page.showBusy(); }
  }
  // Esc leaves Edit mode (from anywhere on the page but the preview itself).
  document.onkeydown = (e) => { if (e.key === "Escape") edit.set(false); };
  // Picking pauses while the preview is stale or about to change (app_page.js: locked()).
  function showEditable() {
    const off = page.stale || page.locked();
    edit.pause(off, page.stale ? t("preview.staleEdit") : off ? t("preview.busyEdit") : "");
    if (off) dropPick();
  }

  // -- the preview's state: out of date when it is older than the app's files -------------
  function showStale(on) {
    page.stale = on;
    staleNotice.hidden = !on;
    // An element of an older preview may be gone from the files: no picking until rebuilt.
    showEditable();
  }
  // The preview's state; a build newer than the frame's (another tab's turn, a refused pick)
  // is loaded.
  async function checkPreview() {
    if (page.running) return;  // a turn changes the files before its build: its end asks again
    try {
      const state = await api("GET", `/api/apps/${appId}/preview`);
      if (page.running) return;
      if (state.buildId && state.buildId !== page.latestBuild) {
        heard(state.buildId);
        if (page.hasPreview && !page.locked()) loadFrame(true);
      }
      showStale(!state.upToDate);
    } catch (_) { /* the next turn's end asks again */ }
  }
  async function rebuild() {
    if (page.busy()) return;
    page.rebuilding = true;
    page.showBusy();
    rebuildButton.textContent = t("preview.rebuilding");
    try {
      const state = await api("POST", `/api/apps/${appId}/preview`);
      if (state.buildId) { page.hasPreview = true; heard(state.buildId); loadFrame(true); }
      if (page.currentTab === "checks") page.checks.refresh();  // they run on the rebuilt preview
      showStale(!state.upToDate);
      if (state.build && state.build.state === "failed") {
        notify(t("preview.rebuildFailed", { why: state.build.error || t("build.failed") }), true);
      }
    } catch (err) { report(err); } finally {
      page.rebuilding = false;
      rebuildButton.textContent = t("preview.rebuild");
      page.showBusy();
    }
  }
  rebuildButton.addEventListener("click", rebuild);

  return { frame, placeholder, editButton, rebuildButton, staleNotice, loadFrame, heard, dropPick,
           showPlaceholder, showChip, showEditable, showStale, checkPreview };
}

// The preview's own origin when it has one (its host's first label is p-{key}), else "".
function ownOrigin(url) {
  try {
    const parsed = new URL(url);
    return parsed.hostname.startsWith("p-") ? parsed.origin : "";
  } catch { return ""; }
}
