// Admin (#/admin/apps, #/admin/users): every app (feature, rename, history, delete) and
// every user.

import { t } from "./i18n.js";
import { h, when } from "./render.js";
import { api, notify, report, session } from "./api.js";

const view = document.getElementById("view");

export async function admin(tab) {
  if (!session.me || session.me.role !== "admin") { view.replaceChildren(h("p", {}, t("admin.only"))); return; }
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
