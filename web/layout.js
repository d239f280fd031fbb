// Phones, dark mode and the keyboard (issue 26): the theme switch (System / Light / Dark,
// kept in localStorage), the app page's Chat / Preview switch for narrow screens, notices
// that fold to one line (the choice kept), tabs moved between with the arrow keys (roving
// tabindex), and one polite live region for what should be announced (not every keystroke).

import { t } from "./i18n.js";
import { h } from "./render.js";

// -- the theme: data-theme on <html> is "light" or "dark"; style.css colours by it --------------

const THEME_KEY = "zc_theme";
export const THEMES = ["system", "light", "dark"];
const systemDark = window.matchMedia("(prefers-color-scheme: dark)");

export function themeChoice() {
  const saved = localStorage.getItem(THEME_KEY);
  return THEMES.includes(saved) ? saved : "system";
}

export function applyTheme() {
  const choice = themeChoice();
  const root = document.documentElement;
  root.dataset.theme = choice === "system" ? (systemDark.matches ? "dark" : "light") : choice;
  root.dataset.themeChoice = choice;
}
systemDark.addEventListener("change", applyTheme);
applyTheme();

export function themeSwitch() {
  const select = h("select", { id: "theme", "aria-label": t("nav.theme"), title: t("nav.theme") },
    THEMES.map((name) => h("option", { value: name, selected: name === themeChoice() }, t(`theme.${name}`))));
  select.addEventListener("change", () => {
    if (select.value === "system") localStorage.removeItem(THEME_KEY);
    else localStorage.setItem(THEME_KEY, select.value);
    applyTheme();
  });
  return select;
}

// -- announcements: one polite live region for the whole console ------------------------------

// In the page from the start: a screen reader follows a region that is there before it speaks.
const announcer = h("div", { id: "announcer", class: "visually-hidden", role: "status", "aria-live": "polite" });
document.body.append(announcer);
export function announce(text) { announcer.textContent = text; }

// -- narrow screens ------------------------------------------------------------------------------

export const narrow = window.matchMedia("(max-width: 600px)");

// Chat / Preview: two toggle buttons over the app page on a phone. The chosen section comes
// first (style.css orders them by the workspace's data-show) and is scrolled to; the other
// stays below it, so nothing on the page is out of reach. Wider screens show both side by
// side and not the switch.
export function phoneSwitch(workspace, chatSection, previewSection) {
  chatSection.id = "chat-section";
  previewSection.id = "preview-section";
  const buttons = { chat: chatSection, preview: previewSection };
  const el = h("div", { class: "phone-switch", role: "group", "aria-label": t("phone.view") },
    Object.entries(buttons).map(([name, section]) => h("button", {
      type: "button", class: "secondary", id: `show-${name}`, "aria-controls": section.id,
      "aria-pressed": "false", onclick: () => show(name, true) }, t(`phone.${name}`))));
  function show(name, scroll = false) {
    workspace.dataset.show = name;
    for (const button of el.children) button.setAttribute("aria-pressed", String(button.id === `show-${name}`));
    if (scroll && narrow.matches) buttons[name].scrollIntoView({ block: "start" });
  }
  show("chat");
  return { el, show };
}

// A notice that folds to its one-line summary; open or folded is remembered (one choice for
// every such notice). Unchosen, it is folded on a phone and open elsewhere.
const NOTICE_KEY = "zc_notice";
export function foldingNotice(id, summary, ...body) {
  const content = h("div", { class: "notice-body", id: `${id}-body` }, body);
  const toggle = h("button", { type: "button", class: "secondary small-button notice-toggle",
                               "aria-controls": content.id });
  const section = h("section", { class: "notice folding", id, "aria-label": t("notice.label") },
    h("div", { class: "notice-head" }, h("p", { class: "notice-summary" }, summary), toggle), content);
  function set(open, remember) {
    content.hidden = !open;
    section.classList.toggle("folded", !open);
    toggle.setAttribute("aria-expanded", String(open));
    toggle.textContent = open ? t("notice.hide") : t("notice.show");
    if (remember) localStorage.setItem(NOTICE_KEY, open ? "open" : "folded");
  }
  toggle.addEventListener("click", () => set(content.hidden, true));
  const saved = localStorage.getItem(NOTICE_KEY);
  set(saved ? saved === "open" : !narrow.matches, false);
  return section;
}

// -- tabs: role=tablist/tab/tabpanel, the arrow keys, Home and End, roving tabindex ---------------

export function tabKeys(tabs, select) {
  for (const tab of tabs) {
    tab.addEventListener("keydown", (e) => {
      const i = tabs.indexOf(tab), n = tabs.length;
      const j = { ArrowRight: (i + 1) % n, ArrowLeft: (i - 1 + n) % n, Home: 0, End: n - 1 }[e.key];
      if (j === undefined) return;
      e.preventDefault();
      select(tabs[j]);
      tabs[j].focus();
    });
  }
}

// Only the selected tab is in the Tab order.
export function rove(tabs, selected) {
  for (const tab of tabs) {
    tab.setAttribute("aria-selected", String(tab === selected));
    tab.tabIndex = tab === selected ? 0 : -1;
  }
}
