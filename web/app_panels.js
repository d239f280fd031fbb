// The app page's panels beside the preview: deploy, the deploys and their rollback, the
// download; what the AI sees (the context panel); the app's title with rename and delete.
// Each is made with the page's shared state (`page`: its app, read and set, its elements).

import { t } from "./i18n.js";
import { h, when } from "./render.js";
import { tallyLabel, tallyShort } from "./checks.js";
import { blank, ApiError, explain } from "./messages.js";
import { API, api, failure, flash, headers, notify, report, sleep } from "./api.js";
import { table } from "./fields.js";
import { publishReport, reportButton } from "./publish_report.js";
import { visitsView } from "./site_visits.js";

// Deploy, the deploys (builds table) and rollback, and the download: { deploy, showBuilds, download }.
export function deployPanel(page) {
  const { appId, panel, deployButton, restore } = page;
  const reports = publishReport(appId);  // a deploy's publish report, under the table
  const visits = visitsView(appId, { api, report });  // the site's visits by day (issue 44)
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
      page.app = await api("GET", `/api/apps/${appId}`);
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
        h("td", {}, t(`build.${b.state}`) + (b.published ? ` · ${t("deploy.live")}` : ""),
          b.state === "succeeded" ? reportButton(b, () => reports.show(b, true)) : null),
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
    if (page.app.deployUrl) {
      head.push(h("div", { class: "row" }, h("a", { href: page.app.deployUrl, target: "_blank", rel: "noopener", id: "deploy-url" }, page.app.deployUrl),
        h("button", { class: "secondary", onclick: async () => { await navigator.clipboard.writeText(page.app.deployUrl); notify(t("deploy.copied")); } }, t("deploy.copy")),
        h("button", { class: "secondary", onclick: () => window.open(page.app.deployUrl, "_blank", "noopener") }, t("deploy.open"))));
    }
    if (rows.length > 1) head.push(h("p", { class: "small", id: "rollback-note" }, t("deploy.rollbackNote")));
    const live = list.builds.find((b) => b.published) || list.builds.find((b) => b.state === "succeeded");
    panel.replaceChildren(...head, table([t("deploy.build"), t("deploy.stateHead"), t("deploy.time"), t("deploy.checks"), t("deploy.actions")], rows),
      live ? reports.section : null);
    if (live) reports.show(live);  // polled while pending, never awaited
    if (page.app.deployUrl) { panel.append(visits.el); visits.refresh(); }
  }
  // A rollback says at once that it is under way (the button busy, every rollback button
  // off until it answers), then that it is done.
  async function rollback(buildId, versionId, button) {
    const buttons = [...panel.querySelectorAll("button.rollback")];
    buttons.forEach((b) => { b.disabled = true; });
    if (button) { button.textContent = t("deploy.rollingBack"); button.setAttribute("aria-busy", "true"); }
    notify(t("deploy.rollingBack"));
    try {
      page.app = await api("POST", `/api/apps/${appId}/rollback`, { buildId });
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
      h("a", { href: url, download: `${page.app.name}.zip` }).click();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (err) { report(err); }
  }
  return { deploy, showBuilds, download };
}

// What the AI sees: a panel of its own, closable, beside the deploy panel.
export function contextPanelOf(page) {
  const { appId, contextPanel, contextButton } = page;
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
}

// Rename and delete (the owner's own app): the title row.
export function appTitle(page) {
  const { appId } = page;
  const nameEl = h("h2", { id: "app-name" }, page.app.name);
  const titleRow = h("div", { class: "row app-title" });
  function showTitle() {
    titleRow.replaceChildren(nameEl, h("span", { class: "small" }, page.app.codeGenType),
      h("button", { class: "secondary small-button", id: "rename", type: "button", onclick: startRename }, t("app.rename")),
      h("button", { class: "danger small-button", id: "delete", type: "button", onclick: remove }, t("app.delete")));
  }
  function startRename() {
    const field = h("input", { id: "rename-input", value: page.app.name, maxlength: "60", "aria-label": t("app.renameLabel") });
    const form = h("form", { class: "row rename", onsubmit: async (e) => {
      e.preventDefault();
      if (!field.value.trim()) { notify(blank("name"), true); field.focus(); return; }
      try {
        page.app = await api("PATCH", `/api/apps/${appId}`, { name: field.value });
        nameEl.textContent = page.app.name;
        showTitle();
        notify(t("app.renamed", { name: page.app.name }));
      } catch (err) { report(err); }
    } }, field, h("button", { type: "submit", id: "rename-save" }, t("app.save")),
       h("button", { type: "button", class: "secondary", onclick: showTitle }, t("app.cancel")));
    titleRow.replaceChildren(form);
    field.focus();
    field.select();
  }
  async function remove() {
    if (!confirm(t("app.confirmDelete", { name: page.app.name }))) return;
    try {
      await api("DELETE", `/api/apps/${appId}`);
      sessionStorage.removeItem(`zc_start_${appId}`);
      flash(t("app.deleted", { name: page.app.name }));
      location.hash = "#/";
    } catch (err) { report(err); }
  }
  showTitle();
  return titleRow;
}
