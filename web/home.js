// Home (#/): create an app from a prompt, my apps and featured apps as tiles, the account's
// model usage over the last 30 days (usage_chart.js), and the offline model's notice.

import { EXAMPLES, lang, t } from "./i18n.js";
import { h, when } from "./render.js";
import { foldingNotice } from "./layout.js";
import { focusNext } from "./keyboard.js";
import { blank } from "./messages.js";
import { api, health, loadImage, notify, report } from "./api.js";
import { counter } from "./fields.js";
import { usageView } from "./usage_chart.js";

const view = document.getElementById("view");

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
export function offlineNotice(onPick) {
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

// What the signed-in account's model requests cost, over all its apps (issue 43).
function accountUsage() {
  const usage = usageView({ id: "account-usage", report,
    heading: h("div", {}, h("h2", { id: "account-usage-title" }, t("usageView.accountTitle")),
      h("p", { class: "small" }, t("usageView.accountHint"))),
    load: () => api("GET", "/api/users/me/usage") });
  usage.el.classList.add("card");
  usage.refresh();
  return h("section", { "aria-labelledby": "account-usage-title" }, usage.el);
}

export function home() {
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
  view.replaceChildren(notice, form, appList(t("home.mine"), "mine"), accountUsage(),
    appList(t("home.featured"), "featured"));
  focusNext(prompt);  // after registering or signing in, the next thing is the prompt
}
