// Small pieces of the forms and panels: a text field's character counter, a table.

import { t } from "./i18n.js";
import { h } from "./dom.js";
import { announce } from "./layout.js";

export const MAX_CHARS = 8000;  // the API's message limit (ZEROCODE_MAX_MESSAGE_CHARS)

// "N / 8000" under a text field, warning near the limit. Nothing is cut: a longer text (a
// paste) stays whole, the counter says by how much it is over, and it is not sent until it
// is shortened (out.over()). A screen reader hears it only when the count comes near the
// limit, reaches it and passes it, not at every key.
export function counter(field) {
  const out = h("div", { class: "counter" });
  let level = 0;
  const update = () => {
    const n = field.value.length;
    const now = n > MAX_CHARS ? 3 : n === MAX_CHARS ? 2 : n >= MAX_CHARS * 0.9 ? 1 : 0;
    out.textContent = now === 3
      ? `${n} / ${MAX_CHARS} — ${t("counter.over", { over: n - MAX_CHARS, max: MAX_CHARS })}`
      : `${n} / ${MAX_CHARS}`;
    out.classList.toggle("near", now > 0);
    out.classList.toggle("over", now === 3);
    if (now > level && (document.activeElement === field || now === 3)) {
      announce(now === 3 ? t("counter.over", { over: n - MAX_CHARS, max: MAX_CHARS })
        : t(now === 2 ? "counter.full" : "counter.near", { n, max: MAX_CHARS }));
    }
    level = now;
  };
  field.addEventListener("input", update);
  update();
  out.update = update;
  // Whether the text is over the limit: then it is not sent, and the counter says why.
  out.over = () => {
    update();
    if (field.value.length <= MAX_CHARS) return false;
    announce(t("counter.over", { over: field.value.length - MAX_CHARS, max: MAX_CHARS }));
    field.focus();
    return true;
  };
  return out;
}

// A table with its header row, in a box that scrolls sideways on a narrow screen.
export function table(heads, rows, attrs = {}) {
  return h("div", { class: "table-wrap" }, h("table", attrs,
    h("thead", {}, h("tr", {}, heads.map((head) => h("th", { scope: "col" }, head)))),
    h("tbody", {}, rows)));
}
