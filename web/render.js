// DOM helpers and the chat's rendering. A reply is drawn by one function whether it comes
// from the live stream (SSE events) or from a stored history entry (after a reload), so it
// looks the same both times: the model's text as markdown, the steps list, the outcome
// lines and the status badge.

import { lang, t } from "./i18n.js";
import { checkItem, checksTallyOf, tallyText } from "./checks.js";
import { h } from "./dom.js";

export { h };  // the views that draw with render.js's helpers import h from here too

export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;",
                                                    '"': "&quot;", "'": "&#39;" }[c]));
}

// Just enough markdown for replies: code fences, inline code, bold, italics, and the line an
// html / multi-file reply has for each file its code changed (fileChange below).
export function markdown(text) {
  return escapeHtml(text).split(/```[\w-]*\n?/).map((part, i) => i % 2
    ? `<div class="code-scroll" tabindex="0"><pre>${part}</pre></div>`  // scrolls: reachable by keyboard
    : part.replace(CHANGE_LINE, fileChange)
      .replace(/`([^`\n]+)`/g, "<code>$1</code>")
      .replace(/\*\*([^*\n]+)\*\*/g, "<b>$1</b>")
      .replace(/(^|[\s(])_([^_\n]+)_(?=$|[\s.,;:!?)])/g, "$1<i>$2</i>"))
    .join("");
}

// -- what an html / multi-file answer's code did -------------------------------------------

// The display has, in place of each code block, "`index.html`: modified, +1 −1 (diff: v3)"
// (engine/code_report.py; docs/api.md): the file, what happened to it, the lines added and
// removed, the version the turn made, and why a block was not saved.
const CHANGE_LINE = /^`([^`\n]+)`: (added|modified|deleted|unchanged|not saved|not known)(?:, \+(\d+) −(\d+))?(?: \(diff: (v\d+)\))?(?: — (.*))?$/gm;
const CHANGE_WORD = { added: "versions.added", modified: "versions.modified", deleted: "versions.deleted",
                      unchanged: "change.unchanged", "not saved": "change.notSaved", "not known": "change.notKnown" };

// The app whose page this is: a diff link opens that app's Versions tab at the version
// (app.js follows the link in the page; its address opens the same from anywhere).
function appOfPage() { return (location.hash.match(/^#\/apps\/([a-z0-9]{20})/) || [])[1]; }

// One change line as markup; its parts arrive escaped already (markdown escapes first).
function fileChange(_, path, status, plus, minus, version, why) {
  const kind = status.replace(" ", "-");
  let out = `<span class="file-change" data-path="${path}" data-status="${kind}"><code>${path}</code> ` +
    `<span class="change ${kind}">${escapeHtml(t(CHANGE_WORD[status]))}</span>`;
  if (plus !== undefined) {
    out += ` <span class="lines" title="${escapeHtml(t("change.lines", { plus, minus }))}">` +
      `<span class="plus">+${plus}</span> <span class="minus">−${minus}</span></span>`;
  }
  const app = appOfPage();
  if (version && app) {
    out += ` <a class="diff-link" href="#/apps/${app}/versions/${version}" data-version="${version}">` +
      `${escapeHtml(t("change.diff", { version }))}</a>`;
  }
  if (why) out += ` <span class="why">— ${why}</span>`;
  return `${out}</span>`;
}

// Which file an html / multi-file answer's block is (engine/codegen.py, FILES).
const FENCE_FILE = { html: "index.html", htm: "index.html", css: "style.css", javascript: "script.js", js: "script.js" };

// A streaming html / multi-file answer: its code blocks folded, each one line naming its file
// and the lines come so far (open one to watch it). When the turn ends the stored reply is
// drawn instead, saying what each block did. A block opened stays open as the text grows.
export function drawStreaming(answer, text) {
  const open = new Set([...answer.querySelectorAll("details.code-live[open]")].map((d) => d.dataset.block));
  const parts = text.split(/```([\w-]*)\n?/);  // prose, lang, code, (info), prose, lang, code…
  let html = "";
  for (let k = 0; 2 * k < parts.length; k += 1) {
    const part = parts[2 * k];
    if (k % 2 === 0) { html += markdown(part); continue; }
    const lang = (parts[2 * k - 1] || "").toLowerCase();
    if (lang === "checks") continue;  // the checks' own lines say them (engine/turn_state.py)
    const body = part.replace(/\n$/, "");
    const n = body ? body.split("\n").length : 0;
    const done = 2 * k + 1 < parts.length;
    const label = `${FENCE_FILE[lang] || lang || t("change.code")} · ${t(done ? "change.lineCount" : "change.writing", { n })}`;
    html += `<details class="code-live" data-block="${k}"${open.has(String(k)) ? " open" : ""}>` +
      `<summary>${escapeHtml(label)}</summary><div class="code-scroll" tabindex="0"><pre>${escapeHtml(body)}</pre></div></details>`;
  }
  answer.innerHTML = html;
}

export function when(seconds) { return new Date(seconds * 1000).toLocaleString(lang()); }

// -- steps ----------------------------------------------------------------------------------

// The file a tool's one-line summary names (engine/tools.py words them), for the compact
// step "write_file src/App.vue"; the whole summary is the step's tooltip.
function pathOf(summary) {
  const verb = summary.match(/^(?:created|replaced|read|modified|deleted|saved) (.+?)(?: \(.*\))?$/);
  if (verb) return verb[1];
  const same = summary.match(/^(\S+) unchanged$/);
  return same ? same[1] : null;
}

// A tool's finished step, from what both the stream (tool event) and the stored entry
// ("✓ `name` summary") carry: whether it worked, the tool and its summary.
export function toolStep(name, ok, summary) {
  if (!ok) return { state: "failed", label: `${name} — ${summary}` };
  // add_check / retire_check: "added check c3: …" says it all.
  if (/^(?:add|retire)_check$/.test(name)) return { state: "ok", label: summary, adds: addedId(summary) };
  const path = pathOf(summary);
  return { state: "ok", label: path ? `${name} ${path}` : name, title: summary };
}

// A line of the stored steps list (engine/turn.py, TurnState.steps) as a step.
export function storedStep(line) {
  const mark = line[0], rest = line.slice(2);
  const state = mark === "✓" ? "ok" : mark === "✗" ? "failed" : mark === "↻" ? "repair" : "note";
  let m;
  if ((m = rest.match(/^`([^`]+)` (.*)$/))) return toolStep(m[1], state === "ok", m[2]);
  if ((m = rest.match(/^saved `([^`]+)`$/))) return toolStep("save_file", true, `saved ${m[1]}`);
  if ((m = rest.match(/^preview built in (.+)$/))) return { state, label: t("step.buildOk"), title: m[1] };
  if (rest === "preview build failed") return { state, label: t("step.buildFailed") };
  if ((m = rest.match(/^repair (\d+)\/(\d+): (.*)$/))) {
    const checks = /acceptance checks? fails?\b/.test(m[3]);
    return { state, label: t(checks ? "step.repairChecks" : "step.repair", { attempt: m[1], max: m[2], why: m[3] }) };
  }
  // An acceptance check's verdict (engine/suite_step.py words it), drawn as the stream's
  // check event is: passed, not run (why), or failed with where, expected and found.
  if ((m = rest.match(/^check (c\d+) passed: (.*)$/))) {
    return { check: { id: m[1], status: "passed", description: m[2] } };
  }
  if ((m = rest.match(/^check (c\d+) not run \((.*?)\): (.*)$/))) {
    return { check: { id: m[1], status: "not_run", note: m[2], description: m[3] } };
  }
  if ((m = rest.match(/^check (c\d+) "(.*)": (.*)$/))) {
    const ev = m[3].match(/^((?:steps|expect)\[\d+\]): expected (.*), found (.*)$/s);
    return { check: { id: m[1], status: "failed", description: m[2],
                      evidence: ev ? { where: ev[1], expected: ev[2], actual: ev[3], screenshot: null } : null } };
  }
  if (rest === "the page was not checked in a browser") return { state, label: t("step.notChecked") };
  if ((m = rest.match(/^the page was not checked in a browser: (.*)$/))) {
    return { state, label: t("step.notCheckedWhy", { why: m[1] }) };  // busy, or failing
  }
  if (rest === "the page loads in a browser without errors") return { state, label: t("step.checked") };
  if ((m = rest.match(/^the page fails in the browser: (.*)$/))) {
    return { state, label: t("step.checkFailed", { why: m[1] }) };
  }
  return { state, label: rest.replace(/`/g, ""), adds: addedId(rest) };
}

export function stepItem(step) {
  if (step.check) return checkItem(step.check, () => Promise.reject(new Error("no screenshot")));
  return h("li", { class: step.state, title: step.title || null, "data-adds": step.adds || null }, step.label);
}

// -- each check once per reply (issue 38) ------------------------------------------------------

// A check is listed once in a reply: by its verdict. The step that added it ("added check
// c1: …" of add_check, "added c1: …" of an answer's checks block) and the model's own echo
// of that line in its text go when the reply has the check's verdict.
const ADDED = /^(?:added check|added) (c\d+): /;
function addedId(line) { const m = ADDED.exec(line || ""); return m ? m[1] : null; }

function withoutEchoes(text, listed) {
  const lines = text.split("\n").filter((line) => !listed.has(addedId(line.trim())));
  // A heading the echo leaves with nothing under it ("Acceptance checks:").
  return lines.filter((line, i) => !(/^acceptance checks:$/i.test(line.trim()) && !(lines[i + 1] || "").trim()))
    .join("\n").replace(/\n{3,}/g, "\n\n").trim();
}

// A check's verdict drawn live: the step that added it goes, the verdict stands for both.
export function drawCheck(steps, item, id) {
  steps.querySelectorAll(`li[data-adds="${CSS.escape(id)}"]`).forEach((li) => li.remove());
  steps.append(item);
}

const STEP_LINE = /^- [✓✗↻–] /;
const NO_CHANGE = "_No files were changed._";
const FAILED = "**Failed:** ";

// A stored reply (history content) in its parts: the model's text, the steps, and the
// outcome lines the engine adds (engine/turn.py, TurnState.display).
export function parseReply(content) {
  const text = [], steps = [], outcome = [];
  for (const part of content.split("\n\n")) {
    const lines = part.split("\n");
    if (lines.every((line) => STEP_LINE.test(line))) {
      steps.push(...lines.map((line) => storedStep(line.slice(2))));
    } else if (part === NO_CHANGE) {
      outcome.push({ kind: "none", text: t("reply.noChange") });
    } else if (part.startsWith(FAILED)) {
      outcome.push({ kind: "failed", text: t("reply.failed", { why: part.slice(FAILED.length) }) });
    } else if (!steps.length && !outcome.length) {
      text.push(part);
    } else {
      outcome.push({ kind: "text", text: part });  // e.g. an interrupted turn's report
    }
  }
  const listed = new Set(steps.filter((s) => s.check).map((s) => s.check.id));
  const joined = withoutEchoes(text.join("\n\n"), listed);
  return { text: joined === "(no answer)" ? t("reply.empty") : joined,
           steps: steps.filter((s) => !listed.has(s.adds)), outcome };
}

// -- messages -------------------------------------------------------------------------------

export const STATUS_OF = { ok: "succeeded", failed: "failed", interrupted: "interrupted" };

export function badge(status) {
  return h("span", { class: `status ${status}` }, t(`status.${status}`));
}

// The parts of a reply, filled in: by the stream as it arrives, or at once from history.
export function replyShell(mode = "build") {
  const thinking = h("details", { class: "thinking", hidden: true },
    h("summary", {}, t("reply.thinking")), h("pre", { tabindex: "0" }));
  const answer = h("div", { class: "answer" });
  const steps = h("ul", { class: "steps" });
  const outcome = h("div", { class: "outcome" });
  // An answer to a question (Ask mode) says so: it changed nothing.
  const tag = mode === "ask" ? h("span", { class: "mode-tag" }, t("mode.answer")) : null;
  const el = h("div", { class: mode === "ask" ? "msg ai ask" : "msg ai" }, tag, thinking, answer, steps, outcome);
  return { el, thinking, answer, steps, outcome };
}

// "Checks: 3 passed, 1 failed" beside a reply's badge: the turn's newest run of the suite.
export function tallyLine(tally) {
  return h("span", { class: "checks-tally", "data-failed": String(tally.failed || 0) }, tallyText(tally));
}

// A turn's model requests and tokens (its done's or its stored entry's `usage`), quietly
// under the reply: "3 requests · 18k tokens in · 2.2k out", the cached part where told,
// "(estimated)" where the platform counted requests its provider reported nothing for.
export function usageLine(usage) {
  if (!usage || !usage.requests) return null;
  let text = t("usage.line", { requests: usage.requests, input: compact(usage.inputTokens),
                               output: compact(usage.outputTokens) });
  if (usage.cachedTokens) text += ` · ${t("usage.cached", { n: compact(usage.cachedTokens) })}`;
  // A cost only where every request's model has a price: never a part shown as the whole.
  if (usage.costUsd != null && !usage.unpricedRequests) {
    text += ` · ${dollars(usage.costUsd)}`;
  }
  // What the repair rounds cost, of that: the rounds after the first (round 0).
  const repairs = (usage.rounds || []).filter((r) => r.round > 0);
  if (repairs.length) {
    const sum = (f) => repairs.reduce((n, r) => n + (r[f] || 0), 0);
    text += ` · ${t("usage.repairs", { rounds: repairs.length, requests: sum("requests"),
                                       tokens: compact(sum("inputTokens") + sum("outputTokens")) })}`;
  }
  if (usage.estimated) text += ` ${t("usage.estimated")}`;
  return h("span", { class: "usage", title: t(usage.estimated ? "usage.titleEstimated" : "usage.title") }, text);
}

// A cost in US dollars: four places under a cent, else two. (The usage views too.)
export function dollars(usd) { return `$${usd < 0.01 ? usd.toFixed(4) : usd.toFixed(2)}`; }

// A count of tokens as "950", "1.2k", "18k", "1.3M". (The usage views too: usage_chart.js.)
export function compact(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

// Draw a stored reply into a shell (a new one, or the live one when its turn ends).
export function fillReply(shell, parsed, status, usage = null) {
  shell.answer.innerHTML = markdown(parsed.text);
  shell.steps.replaceChildren(...parsed.steps.map(stepItem));
  shell.outcome.replaceChildren(...parsed.outcome.map((o) => {
    const p = h("p", { class: `outcome-${o.kind}` });
    p.innerHTML = markdown(o.text);
    return p;
  }));
  shell.el.querySelectorAll(":scope > .status, :scope > .checks-tally, :scope > .usage").forEach((b) => b.remove());
  shell.el.append(badge(status));
  const tally = checksTallyOf(parsed.steps);
  if (tally) shell.el.append(tallyLine(tally));
  const spent = usageLine(usage);
  if (spent) shell.el.append(spent);
  shell.el.dataset.turn = status;
}

// A platform note's lines (engine/restore.py words them) in the chosen language; a line
// the console does not know stays as it is.
export function noteText(content) {
  return content.split("\n").map((line) => {
    let m;
    if ((m = line.match(/^\*\*Restored (v\d+)\*\* as (v\d+)\.$/))) return t("note.restored", { from: m[1], to: m[2] });
    if ((m = line.match(/^\*\*Edited by hand\*\* — saved as (v\d+)\.$/))) return t("note.editedByHand", { version: m[1] });
    if ((m = line.match(/^- (.+): (added|modified|deleted)$/))) {
      return t("note.file", { path: m[1], status: t(`versions.${m[2]}`) });
    }
    if ((m = line.match(/^✓ preview built in (.+)$/))) return t("note.built", { seconds: m[1] });
    if ((m = line.match(/^✗ preview build failed: (.*)$/))) return t("note.buildFailed", { why: m[1] });
    if (line === "The preview is rebuilt by the next turn.") return t("note.nextTurn");
    return line;
  }).join("\n");
}

function elementChip(element) {
  if (!element || !element.tag) return null;
  return h("span", { class: "chip picked-element" }, `<${element.tag}> ${(element.text || "").slice(0, 40)}`);
}

export function userBubble(text, element, images = [], mode = "build") {
  const body = h("div");
  body.innerHTML = escapeHtml(text);
  // The message's images: data URLs as sent, or kept ones by digest (filled by chat.js).
  const pictures = images.length ? h("div", { class: "pics" }, ...images.map((image, i) =>
    typeof image === "string"
      ? h("img", { src: image, alt: t("attach.image", { n: i + 1 }) })
      : h("img", { "data-sha": image.sha256, alt: t("attach.image", { n: i + 1 }),
                   width: image.width, height: image.height }))) : null;
  const tag = mode === "ask" ? h("span", { class: "mode-tag" }, t("mode.question")) : null;
  return h("div", { class: mode === "ask" ? "msg user ask" : "msg user" }, tag, elementChip(element), pictures, body);
}

// A history entry as the chat shows it: the user's message, a reply (ai or error), or a
// platform note (e.g. "Restored version v1 …"), centred and plain.
export function entryView(entry) {
  if (entry.role === "user") return userBubble(entry.content, entry.element, entry.images || [], entry.mode || "build");
  if (entry.role === "note") {
    const note = h("div", { class: "note", role: "note" });
    note.innerHTML = markdown(noteText(entry.content));
    return note;
  }
  const shell = replyShell(entry.mode || "build");
  fillReply(shell, parseReply(entry.content), STATUS_OF[entry.status] || "failed", entry.usage);
  return shell.el;
}

// -- long chats: the older turns folded ------------------------------------------------------

export const FOLD_KEEP = 6;  // the newest turns stay whole
const folds = new WeakMap();  // a turn's first element → its header button

// The chat's turns in order: each begins with a user message or a platform note (a turn of
// its own); replies above the first user message (whose message is on a page not loaded yet)
// are one turn.
function turnsOf(box) {
  const turns = [];
  for (const el of box.children) {
    if (el.classList.contains("turn-fold")) continue;
    const note = el.classList.contains("note");
    const last = turns[turns.length - 1];
    if (!last || note || last.note || el.classList.contains("user")) turns.push({ els: [el], note });
    else last.els.push(el);
  }
  return turns;
}

function cut(text, n) {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= n ? flat : `${flat.slice(0, n - 1).trimEnd()}…`;
}

// A folded turn's one line: the user's message (cut) and how the turn ended.
function foldLabel(turn) {
  const first = turn.els[0];
  const said = first.classList.contains("user") ? (first.querySelector(":scope > div") || first).textContent
    : turn.note ? first.textContent : t("fold.earlier");
  const reply = turn.els.find((el) => el.classList.contains("ai"));
  const status = reply && reply.dataset.turn;
  return [h("span", { class: "fold-mark", "aria-hidden": "true" }), h("span", { class: "fold-text" }, cut(said, 90)),
    status && t(`status.${status}`) !== `status.${status}` ? badge(status) : null];
}

function showFolded(head, open) {
  head.setAttribute("aria-expanded", String(open));
  head.title = t(open ? "fold.hide" : "fold.show");
  for (const el of head.turnEls) el.hidden = !open;
}

// Fold every turn but the newest `keep` to a one-line header (a button: aria-expanded, opens
// and closes the turn). Called whenever turns are added (a page of history, a new turn); a
// turn opened stays open until it is closed or becomes one of the newest again.
export function foldTurns(box, keep = FOLD_KEEP) {
  const turns = turnsOf(box);
  const kept = new Set();
  turns.forEach((turn, i) => {
    const first = turn.els[0];
    if (i >= turns.length - keep) {
      for (const el of turn.els) el.hidden = false;
      return;
    }
    let head = folds.get(first);
    if (!head) {
      head = h("button", { type: "button", class: "turn-fold", "aria-expanded": "false" });
      head.addEventListener("click", () => showFolded(head, head.getAttribute("aria-expanded") !== "true"));
      folds.set(first, head);
    }
    head.turnEls = turn.els;
    head.replaceChildren(...foldLabel(turn).filter(Boolean));
    if (head.nextElementSibling !== first) first.before(head);
    showFolded(head, head.getAttribute("aria-expanded") === "true");
    kept.add(head);
  });
  for (const head of box.querySelectorAll(":scope > .turn-fold")) if (!kept.has(head)) head.remove();
}
