// Register and log in (#/register, #/login).

import { t } from "./i18n.js";
import { h } from "./dom.js";
import { api, report, session } from "./api.js";

const view = document.getElementById("view");

export function authForm(kind) {
  const account = h("input", { name: "account", placeholder: t("auth.account"), "aria-label": t("auth.account"),
                               autocomplete: "username" });
  const password = h("input", { name: "password", type: "password", placeholder: t("auth.password"),
                                "aria-label": t("auth.password"),
                                autocomplete: kind === "login" ? "current-password" : "new-password" });
  const submit = h("button", { type: "submit" }, kind === "login" ? t("auth.login") : t("auth.create"));
  const form = h("form", { class: "card auth", onsubmit: async (e) => {
    e.preventDefault();
    submit.disabled = true;
    try {
      if (kind === "register") {
        await api("POST", "/api/users/register", { account: account.value, password: password.value });
      }
      const login = await api("POST", "/api/users/login", { account: account.value, password: password.value });
      localStorage.setItem("zc_token", login.token);
      session.me = login.user;
      location.hash = "#/";
    } catch (err) { report(err); } finally { submit.disabled = false; }
  } }, h("h2", {}, kind === "login" ? t("auth.login") : t("auth.register")), account, password, submit,
     h("span", { class: "small" }, kind === "login"
       ? h("a", { href: "#/register" }, t("auth.noAccount"))
       : t("auth.rules")));
  view.replaceChildren(form);
  account.focus();
}
