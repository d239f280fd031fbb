// The zerocode console: a static single-page app that talks only to the public HTTP API.
// Hash routes: #/login #/register #/ (home) #/apps/{id} #/admin. No build step, no CDN.
// This module routes and draws the header; the pages: auth.js, home.js, app_page.js,
// admin.js; the API and what they share: api.js. Strings: i18n.js (English, Chinese);
// replies: render.js; code and versions: code.js; acceptance checks: checks.js; phones,
// the theme, tabs and announcements: layout.js.

import { LANGS, lang, setLang, t } from "./i18n.js";
import { h } from "./render.js";
import { themeSwitch } from "./layout.js";
import {
  STORAGE_CHECK_MS, checkStorage, clearToast, drawStorage, loadMe, notify, report, session, signOut, takeFlash, token,
} from "./api.js";
import { authForm } from "./auth.js";
import { home } from "./home.js";
import { appPage } from "./app_page.js";
import { admin } from "./admin.js";

const nav = document.getElementById("nav");

function languageSwitch() {
  const select = h("select", { id: "lang", "aria-label": t("nav.language"), title: t("nav.language") },
    Object.entries(LANGS).map(([code, label]) => h("option", { value: code, selected: code === lang() }, label)));
  select.addEventListener("change", () => { setLang(select.value); route().catch(report); });
  return select;
}

function renderNav() {
  const { me } = session;
  nav.replaceChildren(...(me
    ? [h("a", { href: "#/" }, t("nav.myApps")),
       me.role === "admin" ? h("a", { href: "#/admin" }, t("nav.admin")) : null,
       h("span", { class: "small", id: "whoami" }, me.account),
       h("button", { class: "secondary", id: "logout", onclick: () => signOut() }, t("nav.logout"))]
    : [h("a", { href: "#/login" }, t("nav.login")), h("a", { href: "#/register" }, t("nav.register"))])
    .filter(Boolean), languageSwitch(), themeSwitch());
}

// -- routing ------------------------------------------------------------------------------------

async function route() {
  window.onmessage = null;
  document.onkeydown = null;
  clearToast();  // an error belongs to the page it happened on
  const flashed = takeFlash();
  if (flashed) notify(flashed);
  const path = location.hash.slice(1) || "/";
  if (!session.me && token()) await loadMe();
  renderNav();
  drawStorage();  // in the language just chosen
  if (path === "/login") return authForm("login");
  if (path === "/register") return authForm("register");
  if (!session.me) { location.hash = "#/login"; return; }
  const appMatch = path.match(/^\/apps\/([a-z0-9]{20})(?:\/versions\/(v[1-9][0-9]*))?$/);
  if (appMatch) return appPage(appMatch[1], appMatch[2] || null);
  if (path.startsWith("/admin")) {
    return admin(path.endsWith("/users") ? "users" : path.endsWith("/usage") ? "usage" : "apps");
  }
  return home();
}

window.addEventListener("hashchange", () => route().catch(report));
route().catch(report);
checkStorage();
setInterval(checkStorage, STORAGE_CHECK_MS);
