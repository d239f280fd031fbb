// The Code tab's editor: CodeMirror 6 from the platform's own bundle (web/vendor/editor.js, built
// by `make` from web/editor/; docs/console.md), or, when that bundle is not there (npm could not
// install it), a plain text area with the same few methods. Also copying and downloading a file.

import { t } from "./i18n.js";
import { h } from "./render.js";

// The bundle, imported once; null when it cannot be (absent, or refused).
let bundle = null;
function loadBundle() {
  if (!bundle) bundle = import("./vendor/editor.js").catch(() => null);
  return bundle;
}

export function darkTheme() { return document.documentElement.dataset.theme === "dark"; }

// The language names the editor reports, as the head of the view shows them.
const LANGUAGE_NAMES = { vue: "Vue", html: "HTML", css: "CSS", javascript: "JavaScript", jsx: "JSX",
                         typescript: "TypeScript", tsx: "TSX", json: "JSON" };
export function languageName(language) { return LANGUAGE_NAMES[language] || t("code.plainText"); }

// A text area standing in for the editor: labelled, no spell checking, Ctrl/Cmd+S saves.
function plainEditor(parent, { doc, label, onChange, onSave }) {
  const area = h("textarea", { class: "code-plain", "aria-label": label, spellcheck: "false",
                               autocapitalize: "off", autocomplete: "off", wrap: "off" });
  area.value = doc;
  area.addEventListener("input", () => { if (onChange) onChange(area.value); });
  area.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === "s") {
      e.preventDefault();
      if (onSave) onSave();
    }
  });
  parent.replaceChildren(area);
  parent.dataset.language = "text";
  return {
    language: "text", plain: true,
    getDoc: () => area.value,
    setDoc: (text) => { area.value = text; },
    setDark() { /* style.css colours it with the console */ },
    focus: () => area.focus(),
    destroy() { area.remove(); delete parent.dataset.language; },
  };
}

// An editor for `path` in `parent`: CodeMirror when the bundle loads, else the text area. The
// host element carries it as `.editor` (what the tests read), and `data-language`.
export async function makeEditor(parent, options) {
  const mod = await loadBundle();
  let editor = null;
  if (mod) {
    try { editor = mod.createEditor(parent, { ...options, dark: darkTheme() }); } catch (err) {
      console.error("the code editor failed to start; a plain text area instead", err);
    }
  }
  editor = editor || plainEditor(parent, options);
  parent.editor = editor;
  return editor;
}

// -- copy and download one file ------------------------------------------------------------

export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch (_) { /* no clipboard API here (or not allowed): the old way */ }
  const area = h("textarea", { class: "visually-hidden", "aria-hidden": "true", tabindex: "-1" });
  area.value = text;
  document.body.append(area);
  area.select();
  const ok = document.execCommand("copy");
  area.remove();
  if (!ok) throw new Error(t("code.copyFailed"));
}

// Saves `data` (text or bytes) as a file named after the path's last part.
export function downloadFile(path, data) {
  const url = URL.createObjectURL(new Blob([data], { type: typeof data === "string"
    ? "text/plain;charset=utf-8" : "application/octet-stream" }));
  const link = h("a", { href: url, download: path.split("/").pop(), hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
