// Admin (#/admin/apps, #/admin/users, #/admin/usage): every app (feature, rename, history,
// delete), every user, and what every account and model spent with each account's token
// budget (issue 43).

import { lang, t } from "./i18n.js";
import { compact, dollars, h, when } from "./render.js";
import { api, notify, report, session } from "./api.js";
import { ApiError, explain } from "./messages.js";
import { usageTotals } from "./usage_chart.js";

const view = document.getElementById("view");

export async function admin(tab) {
  if (!session.me || session.me.role !== "admin") { view.replaceChildren(h("p", {}, t("admin.only"))); return; }
  const body = h("div", { class: "admin" });
  const link = (to, label) => h("a", { href: `#/admin/${to}`, class: tab === to ? "active" : "",
                                       "aria-current": tab === to ? "page" : null }, label);
  const tabs = h("div", { class: "tabs" }, link("apps", t("admin.apps")), link("users", t("admin.users")),
    link("usage", t("adminUsage.tab")));
  view.replaceChildren(tabs, body);
  if (tab === "usage") { adminUsage(body); return; }
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
        // Each account's own token budget, from here too: an account that spent nothing yet
        // is in no row of the Usage tab (issue 43).
        const budgetOf = (u) => h("button", { type: "button", class: "secondary small-button budget-open",
          "aria-expanded": "false", "aria-label": t("adminUsage.budgetOf", { account: u.account }),
          onclick: (e) => toggleBudget(e.currentTarget, { userId: u.id, account: u.account }) },
          t("adminUsage.budgetButton"));
        rows.append(...page.users.map((u) => labelled(h("tr", { "data-user": u.id }, h("td", {}, u.account, " ", budgetOf(u)), h("td", {}, u.name),
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

// -- usage and budgets (#/admin/usage; docs/api.md, "Budgets and totals, for admins") ----------

const COLUMNS = ["requests", "input", "output", "cached", "cost"];
const MAX_BUDGET = 1e12;  // the API's largest budget (http/usage_schemas.py)

// A count of tokens written whole ("1,000"), for budgets: an admin set them to the token.
function whole(n) { return Number(n).toLocaleString(lang()); }

// A row's figures (a GET /api/admin/usage row or its total): tokens as the usage views write
// them (the exact count is the cell's title), a cost only where every request had a price.
function figures(u) {
  const count = (n) => h("td", { class: "num", title: String(n), "data-value": String(n) }, compact(n));
  const priced = u.costUsd != null && !u.unpricedRequests;
  const cost = priced ? dollars(u.costUsd)
    : u.requests ? t("adminUsage.costUnknown", { n: u.unpricedRequests }) : "—";
  const estimated = u.estimatedRequests
    ? h("span", { class: "usage-estimated-mark", title: t("usageView.estimatedWhy", { n: u.estimatedRequests, of: u.requests }) },
      ` ${t("usage.estimated")}`)
    : null;
  return [h("td", { class: "num", "data-value": String(u.requests) }, String(u.requests)),
    count(u.inputTokens), count(u.outputTokens), count(u.cachedTokens),
    h("td", { class: priced ? "num cost" : "num cost unknown", title: priced ? String(u.costUsd) : null,
              "data-value": priced ? String(u.costUsd) : "" }, cost, estimated)];
}

// A table of usage rows: a caption, a header per column, a row header per row (the account
// or the model), and the grand total in the footer. `extra`: a last column (the budget).
function usageTable(id, caption, first, rows, total, extra = null) {
  const heads = [first, ...COLUMNS.map((k) => t(`adminUsage.${k}`)), ...(extra ? [extra.head] : [])];
  const labelled = (row) => {
    [...row.children].forEach((cell, i) => cell.setAttribute("data-label", heads[i]));
    return row;
  };
  const body = h("tbody", {}, rows.map((r) => labelled(h("tr", r.attrs, h("th", { scope: "row" }, r.name),
    figures(r.usage), extra ? h("td", {}, extra.cell(r)) : null))));
  const foot = h("tfoot", {}, labelled(h("tr", { class: "usage-total-row" },
    h("th", { scope: "row" }, t("adminUsage.total")), figures(total), extra ? h("td") : null)));
  const table = h("table", { class: "cards usage-table", id },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, heads.map((x) => h("th", { scope: "col" }, x)))), body, foot);
  // The table's box scrolls: focusable, so the keyboard scrolls it too.
  return h("div", { class: "table-wrap", role: "region", tabindex: "0", "aria-label": caption }, table);
}

function adminUsage(body) {
  const again = h("button", { type: "button", class: "secondary small-button", onclick: () => refresh() },
    t("usageView.refresh"));
  const range = h("p", { class: "small usage-range" });
  const shown = h("div", { class: "usage-body", "aria-live": "polite" });
  const el = h("section", { class: "usage-view admin-usage", id: "admin-usage", "aria-labelledby": "admin-usage-title" },
    h("div", { class: "usage-head" }, h("h2", { id: "admin-usage-title" }, t("adminUsage.title")), again), range, shown);
  body.append(el);
  let asked = 0;  // only the newest question's answer is drawn
  async function refresh() {
    const mine = ++asked;
    el.setAttribute("aria-busy", "true");
    try {
      const answer = await api("GET", "/api/admin/usage?limit=200");
      if (mine !== asked) return;
      range.textContent = t("usageView.range", { from: answer.from, to: answer.to });
      const accounts = answer.accounts.map((a) => ({
        attrs: { "data-user": a.userId }, name: a.account ?? t("adminUsage.gone"), usage: a, userId: a.userId, account: a.account,
      }));
      const models = answer.models.map((m) => ({
        attrs: { "data-model": m.model }, name: m.model || t("adminUsage.unknownModel"), usage: m,
      }));
      const budget = {
        head: t("adminUsage.budget"),
        cell: (r) => (r.account == null ? "" : h("button", {
          type: "button", class: "secondary small-button budget-open", "aria-expanded": "false",
          "aria-label": t("adminUsage.budgetOf", { account: r.account }),
          onclick: (e) => toggleBudget(e.currentTarget, r),
        }, t("adminUsage.budgetButton"))),
      };
      const parts = [...usageTotals(answer.total)];
      if (!answer.accounts.length) parts.push(h("p", { class: "small usage-none" }, t("adminUsage.none")));
      else {
        parts.push(usageTable("admin-usage-accounts", t("adminUsage.accounts"), t("adminUsage.account"),
          accounts, answer.total, budget));
        if (answer.accountCount > answer.accounts.length) {
          parts.push(h("p", { class: "small" }, t("adminUsage.more", { shown: answer.accounts.length, count: answer.accountCount })));
        }
        parts.push(usageTable("admin-usage-models", t("adminUsage.models"), t("adminUsage.model"), models, answer.total));
      }
      shown.replaceChildren(...parts);
      el.dataset.loaded = String(mine);  // how many times it was drawn: a test waits for a new one
    } catch (err) {
      if (mine !== asked) return;
      if (err instanceof ApiError && err.status === 404) shown.replaceChildren(h("p", { class: "small" }, t("usageView.notKept")));
      else report(err);
    } finally {
      if (mine === asked) el.removeAttribute("aria-busy");
    }
  }
  refresh();
}

// The budget form, in a row of its own under the account's: opened and closed by its button.
function toggleBudget(button, r) {
  const row = button.closest("tr");
  const next = row.nextElementSibling;
  if (next && next.classList.contains("budget-row")) {
    next.remove();
    button.setAttribute("aria-expanded", "false");
    return;
  }
  const span = row.children.length;
  const form = budgetForm(r.userId, r.account, () => { slot.remove(); button.setAttribute("aria-expanded", "false"); button.focus(); });
  const slot = h("tr", { class: "budget-row", "data-budget-of": r.userId }, h("td", { colspan: String(span) }, form));
  row.after(slot);
  button.setAttribute("aria-expanded", "true");
}

// A validation error's sentence for this form: which field, and what it takes.
function budgetProblem(err) {
  if (!(err instanceof ApiError) || err.code !== "validation_error" || !err.fields.length) return explain(err);
  const said = err.fields.map(({ field }) => String(field || "").split(".")[0])
    .map((name) => (name === "tokensPerMonth" ? "adminUsage.badMonth" : name === "tokensPerDay" ? "adminUsage.badDay" : null));
  const known = [...new Set(said.filter(Boolean))];
  return known.length ? known.map((key) => t(key, { max: whole(MAX_BUDGET) })).join(" ") : explain(err);
}

function budgetForm(userId, account, close) {
  const url = `/api/admin/users/${encodeURIComponent(userId)}/budget`;
  const key = userId.replace(/[^A-Za-z0-9_-]/g, "");
  const input = (name, label) => {
    const field = h("input", { type: "number", min: "0", step: "1", inputmode: "numeric", name, id: `budget-${name}-${key}`,
                               "aria-describedby": `budget-hint-${key} budget-error-${key}` });
    return [field, h("label", { for: field.id }, label, field)];
  };
  const [perDay, dayLabel] = input("tokensPerDay", t("adminUsage.perDay"));
  const [perMonth, monthLabel] = input("tokensPerMonth", t("adminUsage.perMonth"));
  const facts = h("dl", { class: "budget-facts" });
  const problem = h("p", { class: "budget-error", id: `budget-error-${key}`, role: "alert" });
  const said = h("p", { class: "small budget-said", role: "status" });
  const save = h("button", { type: "submit" }, t("adminUsage.save"));
  const platform = h("button", { type: "button", class: "secondary budget-clear" }, t("adminUsage.usePlatform"));
  const pair = (b) => t("adminUsage.perDayMonth", {
    day: b.tokensPerDay == null ? t("adminUsage.noLimit") : whole(b.tokensPerDay),
    month: b.tokensPerMonth == null ? t("adminUsage.noLimit") : whole(b.tokensPerMonth) });
  function draw(b) {
    const fact = (name, label, text) => [h("dt", {}, label), h("dd", { "data-budget": name }, text)];
    facts.replaceChildren(
      ...fact("platform", t("adminUsage.platform"), pair(b.platform)),
      ...fact("override", t("adminUsage.override"), b.override ? pair(b.override) : t("adminUsage.noOverride")),
      ...fact("effective", t("adminUsage.effective"), pair(b.effective)),
      ...fact("spent", t("adminUsage.spent"), t("adminUsage.spentLine", { today: whole(b.spent.today), month: whole(b.spent.thisMonth) })));
    const start = b.override || b.platform;  // the form starts from what would hold
    perDay.value = start.tokensPerDay == null ? "" : String(start.tokensPerDay);
    perMonth.value = start.tokensPerMonth == null ? "" : String(start.tokensPerMonth);
    platform.disabled = !b.override;
    return b;
  }
  // Empty: no limit (null); anything else goes as typed, and the API says what it takes.
  const value = (field) => {
    if (field.validity.badInput) return field.value;  // not a number at all: the API refuses it
    return field.value.trim() === "" ? null : Number(field.value);
  };
  async function send(work, done) {
    problem.textContent = ""; said.textContent = "";
    save.disabled = platform.disabled = true;
    form.setAttribute("aria-busy", "true");
    let answer = null;
    try {
      answer = draw(await work());
      said.textContent = done(answer);
    } catch (err) {
      problem.textContent = budgetProblem(err);
      if (err instanceof ApiError && err.status === 401) report(err);
    } finally {
      form.removeAttribute("aria-busy");
      save.disabled = false;
      if (!answer) platform.disabled = false;
    }
  }
  const form = h("form", { class: "budget-form", novalidate: true, "aria-labelledby": `budget-title-${key}`,
    onsubmit: (e) => {
      e.preventDefault();
      const bodyOut = { tokensPerDay: value(perDay), tokensPerMonth: value(perMonth) };
      send(() => api("PUT", url, bodyOut), (b) => t("adminUsage.saved", { account, budget: pair(b.effective) }));
    } },
    h("div", { class: "panel-head" }, h("h3", { id: `budget-title-${key}` }, t("adminUsage.budgetOf", { account })),
      h("button", { type: "button", class: "secondary close", "aria-label": t("panel.close"), title: t("panel.close"), onclick: close }, "×")),
    facts,
    h("div", { class: "row budget-fields" }, dayLabel, monthLabel),
    h("p", { class: "small", id: `budget-hint-${key}` }, t("adminUsage.hint")),
    h("div", { class: "row" }, save, platform),
    problem, said);
  platform.addEventListener("click", () => send(async () => {
    await api("DELETE", url);
    return api("GET", url);
  }, (b) => t("adminUsage.cleared", { account, budget: pair(b.effective) })));
  form.setAttribute("aria-busy", "true");
  api("GET", url).then(draw).catch((err) => { problem.textContent = budgetProblem(err); })
    .finally(() => form.removeAttribute("aria-busy"));
  return form;
}
