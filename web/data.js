// The app page's Data tab (issue 39, docs/data.md): the app's own data as its builder sees it,
// in either space (the preview's, the live site's): each collection with its count, its
// records in a paged table with search, added and deleted by hand (told to the model), an
// export (JSON, CSV), the app's end users (each removable), and the preview's data reset to
// its seed records. Over
// /api/apps/{id}/data/{space}/...; every record value is shown as text, never as markup.

import { t } from "./i18n.js";
import { h } from "./dom.js";

const OWN = ["createdAt", "owner"];  // shown after the fields; id is in the row's title

export function dataView(appId, { api, raw, report, notify, busy }) {
  let space = "preview", chosen = null, cursor = null, overview = null;
  const spaceButtons = ["preview", "live"].map((name) => h("button", {
    type: "button", class: "secondary small-button", id: `data-space-${name}`, "aria-pressed": String(name === space),
    onclick: () => { space = name; chosen = null; refresh(); } }, t(`data.space.${name}`)));
  const resetButton = h("button", { type: "button", class: "secondary small-button", id: "data-reset" }, t("data.reset"));
  const summary = h("p", { class: "small", id: "data-summary", role: "status" });
  const collections = h("div", { class: "data-collections", id: "data-collections", role: "group",
                                 "aria-label": t("data.collections") });
  const search = h("input", { type: "search", id: "data-search", "aria-label": t("data.search"),
                              placeholder: t("data.search"), maxlength: "100" });
  const exports = h("span", { class: "data-exports" });
  const records = h("div", { class: "data-records", id: "data-records" });
  const addForm = h("form", { class: "data-add", id: "data-add" });
  const more = h("button", { type: "button", class: "secondary small-button", id: "data-more", hidden: true }, t("data.more"));
  const users = h("div", { class: "data-users", id: "data-users" });
  const el = h("div", { class: "data-view", id: "data-view" },
    h("div", { class: "data-head" }, ...spaceButtons, resetButton, summary),
    collections, h("div", { class: "data-tools" }, search, exports), addForm, records, more,
    h("h3", {}, t("data.users")), users);

  let timer = null;
  search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => showRecords(false), 250); });
  more.addEventListener("click", () => showRecords(true));
  resetButton.addEventListener("click", async () => {
    if (busy() || !window.confirm(t("data.resetConfirm"))) return;
    resetButton.disabled = true;
    try {
      const done = await api("DELETE", `/api/apps/${appId}/data/preview`);
      notify(t("data.resetDone", { records: done.deleted, users: done.users }));
      await refresh();
    } catch (err) { report(err); } finally { resetButton.disabled = busy(); }
  });

  async function refresh() {
    for (const b of spaceButtons) b.setAttribute("aria-pressed", String(b.id === `data-space-${space}`));
    resetButton.hidden = space !== "preview";
    try {
      overview = await api("GET", `/api/apps/${appId}/data/${space}`);
    } catch (err) { report(err); return; }
    const names = overview.collections.map((c) => c.name);
    if (!names.includes(chosen)) chosen = names[0] || null;
    summary.textContent = names.length ? t("data.summary", { n: names.length })
      : t(space === "live" && !overview.buildId ? "data.noSite" : "data.none");
    collections.replaceChildren(...overview.collections.map((c) => h("button", {
      type: "button", class: "secondary small-button collection", "aria-pressed": String(c.name === chosen),
      "data-collection": c.name, onclick: () => { chosen = c.name; search.value = ""; refresh(); } },
      `${c.name} (${c.count})`)));
    exports.replaceChildren(...(chosen ? ["json", "csv"].map((form) => h("button", {
      type: "button", class: "secondary small-button", id: `data-export-${form}`,
      onclick: () => exportAs(form) }, t(`data.export.${form}`))) : []));
    search.hidden = !chosen;
    showAddForm(overview.collections.find((c) => c.name === chosen));
    await Promise.all([showRecords(false), showUsers()]);
  }

  async function showRecords(next) {
    const collection = overview && overview.collections.find((c) => c.name === chosen);
    if (!collection) { records.replaceChildren(); more.hidden = true; return; }
    const query = new URLSearchParams({ limit: "50", sort: "-createdAt" });
    if (search.value.trim()) query.set("q", search.value.trim());
    if (next && cursor) query.set("cursor", cursor);
    let page;
    try {
      page = await api("GET", `/api/apps/${appId}/data/${space}/${encodeURIComponent(chosen)}?${query}`);
    } catch (err) { report(err); return; }
    cursor = page.cursor;
    more.hidden = !cursor;
    const columns = [...collection.fields.map((f) => f.name), ...OWN];
    const rows = page.records.map((r) => h("tr", { title: r.id, "data-id": r.id },
      ...columns.map((c) => h("td", {}, cell(r[c]))),
      h("td", {}, h("button", { type: "button", class: "secondary small-button", "aria-label": t("data.deleteRecord"),
                                onclick: () => deleteRecord(r) }, "×"))));
    const body = next ? records.querySelector("tbody") : null;
    if (body) { body.append(...rows); return; }
    records.replaceChildren(page.records.length ? h("table", { class: "data-table" },
      h("caption", { class: "visually-hidden" }, chosen),
      h("thead", {}, h("tr", {}, ...columns.map((c) => h("th", { scope: "col" }, c)),
        h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, t("data.actions"))))),
      h("tbody", {}, ...rows)) : h("p", { class: "small" }, t("data.noRecords")));
  }

  // A record by hand: one input per field of the collection (told to the model, as any
  // hand change of the app's data).
  function showAddForm(collection) {
    if (!collection) { addForm.replaceChildren(); return; }
    const inputs = collection.fields.map((f) => {
      const id = `data-field-${f.name}`;
      const input = f.type === "bool" ? h("input", { type: "checkbox", id })
        : f.type === "enum" ? h("select", { id }, h("option", { value: "" }, "—"), ...(f.values || []).map((v) => h("option", { value: v }, v)))
        : h("input", { id, type: f.type === "number" ? "number" : "text", step: f.type === "number" ? "any" : null });
      return { f, input, row: h("label", { for: id }, f.name + (f.required ? " *" : ""), " ", input) };
    });
    const add = h("button", { type: "submit", class: "secondary small-button", id: "data-add-button" }, t("data.add"));
    addForm.replaceChildren(h("fieldset", {}, h("legend", {}, t("data.addTo", { name: collection.name })),
      ...inputs.map((i) => i.row), add));
    addForm.onsubmit = async (e) => {
      e.preventDefault();
      const fields = {};
      for (const { f, input } of inputs) {
        if (f.type === "bool") fields[f.name] = input.checked;
        else if (input.value !== "") fields[f.name] = f.type === "number" ? Number(input.value) : input.value;
      }
      add.disabled = true;
      try {
        await api("POST", `/api/apps/${appId}/data/${space}/${encodeURIComponent(collection.name)}`, fields);
        notify(t("data.added"));
        await refresh();
      } catch (err) { report(err); } finally { add.disabled = false; }
    };
  }

  async function deleteRecord(record) {
    if (!window.confirm(t("data.deleteConfirm"))) return;
    try {
      await api("DELETE", `/api/apps/${appId}/data/${space}/${encodeURIComponent(chosen)}/${encodeURIComponent(record.id)}`);
      notify(t("data.deleted"));
      await refresh();
    } catch (err) { report(err); }
  }

  async function showUsers() {
    let page;
    try {
      page = await api("GET", `/api/apps/${appId}/data/${space}/users?limit=100`);
    } catch (err) { report(err); return; }
    users.replaceChildren(page.users.length ? h("ul", { class: "data-user-list" }, ...page.users.map((u) => h("li", {},
      h("span", {}, u.username), " ", h("span", { class: "small" }, u.createdAt.slice(0, 16).replace("T", " ")), " ",
      h("button", { type: "button", class: "secondary small-button", "aria-label": t("data.removeUser", { name: u.username }),
                    onclick: () => removeUser(u) }, t("data.remove")))))
      : h("p", { class: "small" }, t("data.noUsers")));
  }

  async function removeUser(user) {
    if (!window.confirm(t("data.removeConfirm", { name: user.username }))) return;
    try {
      await api("DELETE", `/api/apps/${appId}/data/${space}/users/${encodeURIComponent(user.id)}`);
      notify(t("data.removed", { name: user.username }));
      await showUsers();
    } catch (err) { report(err); }
  }

  async function exportAs(form) {
    try {
      const response = await raw("GET", `/api/apps/${appId}/data/${space}/${encodeURIComponent(chosen)}/export?format=${form}`);
      const url = URL.createObjectURL(await response.blob());
      h("a", { href: url, download: `${chosen}-${space}.${form}` }).click();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
    } catch (err) { report(err); }
  }

  function setBusy(on) { resetButton.disabled = on; }
  return { el, refresh, setBusy };
}

// A value as text: strings as they are, anything else as JSON; none as an empty cell.
function cell(value) {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}
