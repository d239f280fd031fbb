// The app page (#/apps/{id}): the chat on the left (chat.js), the preview and the Code,
// Versions, Checks, Data, Images and Usage tabs on the right (preview_pane.js, code.js,
// checks.js, data.js, images.js, usage_chart.js);
// the deploy, context and title panels: app_panels.js. This module holds the page's shared state and
// ties the parts together: one change at a time, a restore, an edit, the tabs, the layout.

import { t } from "./i18n.js";
import { codeView, versionsView } from "./code.js";
import { checksView } from "./checks.js";
import { dataView } from "./data.js";
import { imagesView } from "./images.js";
import { usageView } from "./usage_chart.js";
import { h } from "./render.js";
import { foldingNotice, phoneSwitch, rove, tabKeys } from "./layout.js";
import { attachments } from "./attach.js";
import { focusNext } from "./keyboard.js";
import { otherTabs } from "./tabs.js";  // many tabs, one truth
import { explain } from "./messages.js";
import { api, apiRaw, health, loadImage, notify, report, sleep } from "./api.js";
import { counter } from "./fields.js";
import { makePreview } from "./preview_pane.js";
import { makeChat } from "./chat.js";
import { appTitle, contextPanelOf, deployPanel } from "./app_panels.js";

const view = document.getElementById("view");

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

export async function appPage(appId, openVersion = null) {
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
  const attached = attachments(input);  // a message's images (attach.js)
  const deployButton = h("button", { id: "deploy" }, t("app.deploy"));
  const contextButton = h("button", { class: "secondary", id: "context", "aria-expanded": "false",
                                      "aria-controls": "context-panel" }, t("app.context"));
  const panel = h("section", { class: "panel", id: "panel", hidden: true });
  const contextPanel = h("section", { class: "panel", id: "context-panel", hidden: true,
                                      "aria-labelledby": "context-title" });
  // The page's state and parts, shared with the parts made elsewhere (preview_pane.js,
  // chat.js, turn_stream.js, app_panels.js): each adds what it makes, and they call each
  // other through it.
  const page = {
    appId, app, messages, input, inputCount, send, stopButton, chipSlot, attached, deployButton, contextButton, panel,
    contextPanel,
    picked: null, running: false, restoring: false, rebuilding: false, savingText: false, before: null,
    loadingOlder: false, hasPreview: false, stale: false, stoppable: null, framed: false,
    // Which preview build the frame shows (issue 24): an element picked in it names that build,
    // and the API refuses one of any build but the preview shown now. `latestBuild` is the
    // newest the console has heard of (a build event, GET/POST …/preview, a restore's or an
    // edit's build), taken as the frame's address is set (never after: the address may only
    // show that build or a newer one, which the API refuses rather than mistakes); it becomes
    // `frameBuild` once that page has loaded. A page of another build drops the pick.
    latestBuild: null, loadingBuild: null, frameBuild: null,
    asked: new Map(),  // turn → its user message { content, element }, from the history
    currentTab: "preview",
    busy, locked, showBusy, restore, edited, showTab,
  };
  // The preview pane (preview_pane.js) and the chat (chat.js).
  const { frame, placeholder, editButton, rebuildButton, staleNotice, loadFrame, heard, showPlaceholder,
          showEditable, checkPreview } = Object.assign(page, makePreview(page));
  const { loadHistory, reloadHistory, chat, reattach, modeSwitch } = Object.assign(page, makeChat(page));

  // One change at a time: a running turn, a restore or a rebuild disables the others.
  function busy() { return page.running || page.restoring || page.rebuilding || page.savingText || code.saving(); }
  // What changes the preview under a pick: picking pauses and the pick is dropped meanwhile
  // (issue 24; a text saved in place keeps Edit mode: its new build drops an older pick).
  // Edit mode itself stays as the builder set it, and picks again in the new preview.
  function locked() { return page.running || page.restoring || page.rebuilding; }
  // A turn has ended when the page stops running one (chat.js's follow, whichever way it
  // ended): the Usage tab, if shown, reads what the turn's requests added.
  let wasRunning = false;
  function showBusy() {
    if (wasRunning && !page.running && page.currentTab === "usage") usage.refresh();
    wasRunning = page.running;
    showEditable();
    send.disabled = busy();
    rebuildButton.disabled = busy();
    versions.setBusy(busy());
    code.setBusy();
    checks.setBusy(busy());
    data.setBusy(busy());
    images.setBusy(busy());
  }

  // Another tab or device changed the app (its turn ended, a restore, an edit): read it again.
  async function caughtUp() {
    await reloadHistory();
    page.hasPreview = page.hasPreview || await previewBuilt(appId).catch(() => false);
    if (page.currentTab !== "preview") ({ code, versions, checks, data, images, usage })[page.currentTab].refresh();
    checkPreview();
  }

  // -- versions: restore one, then show what it changed everywhere -----------------------
  // Whether the files were restored (a failure is said).
  async function restore(versionId) {
    if (busy()) return false;
    page.restoring = true;
    showBusy();
    notify(t("versions.restoring", { version: versionId }));
    let result = null;
    try {
      result = await api("POST", `/api/apps/${appId}/versions/${versionId}/restore`);
      const build = await settled(result.build);
      if (build && build.state === "succeeded") { page.hasPreview = true; heard(build.id); }
      if (page.hasPreview) loadFrame(true);
      await reloadHistory();
      if (page.currentTab === "versions") await versions.refresh();
      if (page.currentTab === "code") await code.refresh();
      if (page.currentTab === "checks") checks.refresh();  // they run on the restored preview
      checkPreview();
      notify(result.changed.length
        ? t("versions.restored", { from: versionId, to: result.version.id })
        : t("versions.same", { version: versionId }));
    } catch (err) { report(err); } finally {
      page.restoring = false;
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
    if (build && build.state === "succeeded") { page.hasPreview = true; heard(build.id); }
    if (page.hasPreview) loadFrame(true);
    await reloadHistory();
    await versions.refresh();
    // The checks now run on the edited preview (issue 38): the tab, if shown, follows that
    // run; read before the edit's answer came, it showed the verdicts of the files before.
    if (page.currentTab === "checks") checks.refresh();
    checkPreview();
    others.tell("changed");
    return build;
  }

  // -- the views: preview, code, versions -------------------------------------------------
  const code = codeView(appId, { api, raw: apiRaw, report, explain, busy, busyChanged: () => showBusy(), onSaved: edited,
                                 loadImage });
  const versions = versionsView(appId, { api, report, restore, busy, loadImage });
  const checks = checksView(appId, { api, report, notify, loadImage, busy, restore, onApp: (a) => { page.app = a; } });
  const data = dataView(appId, { api, raw: apiRaw, report, notify, busy });
  const images = imagesView(appId, { api, report, notify, loadImage, busy, onSaved: edited });
  // What the app's model requests cost, by day (issue 43): read when shown, and again after a turn.
  const usage = usageView({ id: "usage-view", heading: h("h3", {}, t("usageView.title")), report,
                            load: () => api("GET", `/api/apps/${appId}/usage`) });
  Object.assign(page, { code, versions, checks, data, images, usage });
  const previewPane = h("div", { class: "pane preview-pane", id: "preview-pane" }, staleNotice, placeholder, frame);
  for (const pane of [code, versions, checks, data, images, usage]) pane.el.classList.add("pane");
  const panes = { preview: previewPane, code: code.el, versions: versions.el, checks: checks.el, data: data.el,
                  images: images.el, usage: usage.el };
  const tabs = Object.keys(panes).map((name) => h("button", {
    type: "button", role: "tab", id: `tab-${name}`, class: "tab", "aria-controls": panes[name].id,
    "aria-selected": String(name === "preview"), onclick: () => showTab(name) }, t(`app.tab.${name}`)));
  tabKeys(tabs, (tab) => showTab(tab.id.slice(4)));
  function showTab(name, version = null) {
    page.currentTab = name;
    rove(tabs, tabs.find((tab) => tab.id === `tab-${name}`));
    for (const [key, pane] of Object.entries(panes)) pane.hidden = key !== name;
    if (name === "code") code.refresh();
    if (name === "versions") versions.refresh(version);
    if (name === "checks") checks.refresh();
    if (name === "data") data.refresh();
    if (name === "images") images.refresh();
    if (name === "usage") usage.refresh();
  }
  for (const [name, pane] of Object.entries(panes)) {
    pane.setAttribute("role", "tabpanel");
    pane.setAttribute("aria-labelledby", `tab-${name}`);
  }
  rove(tabs, tabs[0]);
  code.el.hidden = true; versions.el.hidden = true; checks.el.hidden = true; data.el.hidden = true;
  images.el.hidden = true; usage.el.hidden = true;
  // -- deploy and rollback, the download, what the AI sees, the title (app_panels.js) -------
  const { showBuilds, download } = deployPanel(page);
  contextPanelOf(page);
  const titleRow = appTitle(page);

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
    h("div", { class: "composer" }, chipSlot, attached.strip, input, attached.picker,
      h("div", { class: "row" }, modeSwitch, send, attached.button, stopButton,
        h("span", { class: "small", id: "send-hint" }, t("app.sendHint")), inputCount)));
  const previewSection = h("section", { class: "preview", "aria-label": t("phone.preview") },
    h("div", { class: "toolbar" }, h("div", { class: "tabs", role: "tablist", "aria-label": t("app.tabs") }, tabs),
      editButton, deployButton,
      h("button", { class: "secondary", onclick: download }, t("app.download")), contextButton,
      h("a", { href: page.app.previewUrl, target: "_blank", rel: "noopener" }, t("app.openPreview"))),
    panel, contextPanel, previewPane, code.el, versions.el, checks.el, data.el, images.el, usage.el);
  const workspace = h("div", { class: "workspace" });
  const phone = page.phone = phoneSwitch(workspace, chatSection, previewSection);
  workspace.append(phone.el, chatSection, previewSection);
  input.setAttribute("aria-describedby", "send-hint");
  view.replaceChildren(workspace);
  if (!openVersion) focusNext(input);  // after Create too: the next message, while the first turn runs
  const others = page.others = otherTabs(appId, { api, alive: () => messages.isConnected, idle: () => !busy(),
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
  page.hasPreview = page.hasPreview || built;
  if (page.hasPreview) loadFrame(false); else showPlaceholder(Boolean(runs || starting));
  if (start && (entries.length || runs)) sessionStorage.removeItem(`zc_start_${appId}`);
  if (runs) reattach(runs);
  else if (starting) { sessionStorage.removeItem(`zc_start_${appId}`); chat(start, null, false); }
  else checkPreview();
  if (page.app.deployUrl) { panel.hidden = false; showBuilds().catch(report); }
  if (openVersion) showTab("versions", openVersion);  // #/apps/{id}/versions/{v}: a diff link
}
