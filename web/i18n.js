// Every string the console shows, in English and Chinese (zh-CN), one module of strings per
// language (strings_en.js, strings_zh.js). The language is the one chosen with the header's
// switch (kept in localStorage), else the browser's first language we have
// (navigator.languages), else English. <html lang> follows it.

import { en } from "./strings_en.js";
import { zh } from "./strings_zh.js";

export const LANGS = { en: "English", "zh-CN": "中文" };
const KEY = "zc_lang";

const DICTS = { en, "zh-CN": zh };

// Example prompts the offline scripted model really handles (its routing reads these words:
// "multi-file"/"separate CSS"/"多文件" make a multi-file site, "Vue" a Vue project, anything
// else one page). Each language lists its own three and one in the other language.
export const EXAMPLES = {
  en: [
    "A landing page for a bakery",
    "A multi-file site for a photo studio, with a separate CSS file",
    "A Vue todo app with an about page",
    "一个介绍大熊猫的网页",
  ],
  "zh-CN": [
    "一个介绍大熊猫的网页",
    "一个摄影工作室的多文件网站，带独立的 CSS",
    "一个带关于页面的 Vue 待办应用",
    "A landing page for a bakery",
  ],
};

function detect() {
  const saved = localStorage.getItem(KEY);
  if (saved && DICTS[saved]) return saved;
  for (const tag of navigator.languages || [navigator.language || ""]) {
    const lower = String(tag).toLowerCase();
    if (lower.startsWith("zh")) return "zh-CN";
    if (lower.startsWith("en")) return "en";
  }
  return "en";
}

let current = detect();
document.documentElement.lang = current;

export function lang() { return current; }

export function setLang(choice) {
  if (!DICTS[choice]) return;
  current = choice;
  localStorage.setItem(KEY, choice);
  document.documentElement.lang = choice;
}

// The string for a key in the current language (English when a key has no translation),
// with {name} placeholders filled from vars.
export function t(key, vars = {}) {
  const text = DICTS[current][key] ?? en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
}
