// The console's code editor: CodeMirror 6, bundled by `make` (esbuild) into web/vendor/editor.js
// and served by the platform with the console; nothing comes from a CDN. web/code.js imports
// it, and falls back to a plain text area when the bundle is not there.
//
// The console's CSP is `style-src 'self'`: a <style> element that CodeMirror would add to the
// document is refused. In a shadow root its styles go into a constructed stylesheet
// (adoptedStyleSheets), which the policy allows; so the editor lives in one, and the console's
// colours (CSS custom properties) reach it by inheritance.

import { basicSetup } from "codemirror";
import { Compartment, EditorState, Prec } from "@codemirror/state";
import { EditorView, keymap } from "@codemirror/view";
import { HighlightStyle, defaultHighlightStyle, syntaxHighlighting, syntaxTree } from "@codemirror/language";
import { html } from "@codemirror/lang-html";
import { css } from "@codemirror/lang-css";
import { javascript } from "@codemirror/lang-javascript";
import { json } from "@codemirror/lang-json";
import { vue } from "@codemirror/lang-vue";
import { color as oneDarkColors, oneDarkHighlightStyle, oneDarkTheme } from "@codemirror/theme-one-dark";

// The language of a file, by its extension: [name, support], or null for plain text.
const LANGUAGES = {
  vue: () => vue(),
  html: () => html(),
  htm: () => html(),
  css: () => css(),
  js: () => javascript(),
  mjs: () => javascript(),
  cjs: () => javascript(),
  jsx: () => javascript({ jsx: true }),
  ts: () => javascript({ typescript: true }),
  mts: () => javascript({ typescript: true }),
  tsx: () => javascript({ jsx: true, typescript: true }),
  json: () => json(),
};

export function languageOf(path) {
  const ext = /\.([a-z0-9]+)$/i.exec(path || "");
  const make = ext && LANGUAGES[ext[1].toLowerCase()];
  return make ? make() : null;
}

// Token colours with at least 4.5:1 contrast on the editor's background (WCAG AA; the console's
// axe-core test scans the editor): the two stock styles, with their few paler colours darkened
// (light) or lightened (dark).
const LIGHT_FIX = { "#f00": "#c00", "#e40": "#b03000", "#085": "#075" };
const DARK_FIX = { [oneDarkColors.stone]: "#9da5b4", [oneDarkColors.coral]: "#ef8891", [oneDarkColors.violet]: "#d38ae6" };
function recoloured(style, fixes) {
  return HighlightStyle.define(style.specs.map((spec) =>
    spec.color && fixes[spec.color] ? { ...spec, color: fixes[spec.color] } : spec));
}
const lightHighlight = recoloured(defaultHighlightStyle, LIGHT_FIX);
const darkHighlight = recoloured(oneDarkHighlightStyle, DARK_FIX);

// The light theme in the console's own colours; the dark one is One Dark's, its gutter's
// numbers lightened like its comments.
const lightTheme = EditorView.theme({
  "&": { backgroundColor: "var(--surface, #fff)", color: "var(--ink, #1d2433)" },
  ".cm-gutters": { backgroundColor: "var(--surface-2, #f1f3f5)", color: "var(--muted, #5c6477)",
                   borderRight: "1px solid var(--line, #d6dae4)" },
  ".cm-activeLineGutter": { backgroundColor: "var(--selected, #e3eaff)" },
  ".cm-activeLine": { backgroundColor: "#3b5bdb0d" },
}, { dark: false });
const darkGutter = EditorView.theme({
  ".cm-gutter .cm-gutterElement": { color: "#9da5b4" },
}, { dark: true });

function themeFor(dark) {
  return dark ? [oneDarkTheme, darkGutter, syntaxHighlighting(darkHighlight)]
    : [lightTheme, syntaxHighlighting(lightHighlight)];
}

// The editor's frame in its shadow root: it fills its host and scrolls inside.
const frame = EditorView.theme({
  "&": { flex: "1", minHeight: "0", height: "100%", fontSize: "0.8rem" },
  ".cm-scroller": { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace", lineHeight: "1.4" },
  "&.cm-focused": { outline: "2px solid var(--focus, #3b5bdb)", outlineOffset: "-2px" },
});

/**
 * An editor in `parent` (an element; the editor fills it, inside a shadow root).
 * options: doc (the text), path (chooses the language), dark (One Dark), label (the
 * accessible name), onChange(doc) after each change, onSave() on Ctrl/Cmd+S.
 * Returns { getDoc, setDoc, setDark, focus, destroy, language, syntaxAt(pos), view }.
 */
export function createEditor(parent, { doc = "", path = "", dark = false, label = "", onChange, onSave } = {}) {
  const shadow = parent.shadowRoot || parent.attachShadow({ mode: "open" });
  const theme = new Compartment();
  const support = languageOf(path);
  const extensions = [
    basicSetup,
    frame,
    theme.of(themeFor(dark)),
    // tabindex: a contenteditable is focusable anyway; said outright, checkers (axe-core's
    // scrollable-region-focusable) see that the scrolling editor has keyboard access.
    EditorView.contentAttributes.of({ "aria-label": label, tabindex: "0" }),
    Prec.highest(keymap.of([{ key: "Mod-s", preventDefault: true, run: () => { if (onSave) onSave(); return true; } }])),
    EditorView.updateListener.of((update) => { if (update.docChanged && onChange) onChange(update.state.doc.toString()); }),
  ];
  if (support) extensions.push(support);
  const view = new EditorView({ state: EditorState.create({ doc, extensions }), parent: shadow, root: shadow });
  const language = support ? support.language.name : "text";
  parent.dataset.language = language;
  return {
    view,
    language,
    getDoc: () => view.state.doc.toString(),
    // Replaces the whole text (a reload): not an edit the user made, so no onChange.
    setDoc(text) {
      const quiet = onChange;
      onChange = null;
      try { view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }); } finally { onChange = quiet; }
    },
    setDark: (on) => view.dispatch({ effects: theme.reconfigure(themeFor(on)) }),
    focus: () => view.focus(),
    // The syntax nodes around a position, innermost first (the tests read the parse with it).
    syntaxAt(pos) {
      const names = [];
      for (let node = syntaxTree(view.state).resolveInner(pos, 1); node; node = node.parent) names.push(node.name);
      return names;
    },
    destroy() { view.destroy(); delete parent.dataset.language; },
  };
}
