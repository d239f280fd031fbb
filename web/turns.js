// Stop and Retry mean what they say (issue 38, point 2). A turn that ends failed or
// interrupted keeps what it already wrote: its files were recorded as a version (docs/api.md,
// "Versions"). Its reply says so and offers "Undo what this turn wrote" (a restore of the
// version before it); its Retry offers that undo first, since a retry on the changed files
// may find nothing left to change. A turn that wrote nothing offers neither: Retry just
// sends its message again.

import { t } from "./i18n.js";
import { h } from "./render.js";

// What the turn wrote, while its version is still the app's files: { version, before,
// files } (`before` null when the turn made the first version: nothing to go back to), or
// null when it wrote nothing or something newer has changed the files since. The version
// is recorded before the turn's reply is stored, so it is there once the reply is.
export async function turnWrote(api, appId, turn) {
  const { versions } = await api("GET", `/api/apps/${appId}/versions?limit=1`);
  const made = versions[0];
  if (!made || made.turn !== turn || made.kind !== "turn") return null;
  const diff = await api("GET", `/api/apps/${appId}/versions/${made.id}/diff`);
  return { version: made.id, before: diff.against, files: diff.files.length };
}

// Beside a reply that ended failed or interrupted: what it kept, Undo, and Retry.
// `wrote`: turnWrote's answer (a promise); `retry()` sends the turn's message again;
// `undo(version)` restores that version, resolving true once it did (it says why not).
export function afterTurn(el, { wrote, retry, undo }) {
  const retryButton = h("button", { type: "button", class: "secondary small-button retry",
                                    title: t("reply.retryHint") }, t("reply.retry"));
  el.append(retryButton);
  const facts = wrote.catch(() => null);  // unknown: offer nothing that claims it
  facts.then((w) => {
    retryButton.dataset.wrote = w ? w.version : "";  // known now (tests wait for it)
    if (w && retryButton.isConnected) retryButton.before(keptNotice(w, undo));
  });
  retryButton.addEventListener("click", async () => {
    const w = await facts;
    if (!w || !w.before) { retry(); return; }
    retryButton.hidden = true;
    retryButton.after(retryChoice(w, { retry, undo, back: (focus) => {
      retryButton.hidden = false;
      if (focus) retryButton.focus();
    } }));
  });
}

function keptNotice(w, undo) {
  const said = h("p", { class: "kept-text" },
    t(w.files === 1 ? "turn.kept1" : "turn.kept", { n: w.files, version: w.version }));
  const box = h("div", { class: "turn-kept", "data-version": w.version, "data-before": w.before || "" }, said);
  if (w.before) {
    const button = h("button", { type: "button", class: "secondary small-button undo-turn",
                                 title: t("turn.undoHint", { version: w.before }) }, t("turn.undo"));
    button.addEventListener("click", async () => {
      button.disabled = true;
      // Done: the chat is read again and this reply is no longer the newest (the restore's
      // note is). Not done: say so here too, the files being as the turn left them.
      if (!(await undo(w.before)) && box.isConnected) {
        button.disabled = false;
        said.textContent = t("turn.undoFailed", { version: w.version });
      }
    });
    box.append(button);
  }
  return box;
}

// "This turn already changed the files (v5). Undo it first, then retry?"
function retryChoice(w, { retry, undo, back }) {
  const text = h("p", {}, t("turn.retryChoice", { version: w.version }));
  const close = (focus) => { box.remove(); back(focus); };  // Retry stays until a turn starts
  const first = h("button", { type: "button", class: "small-button undo-retry", onclick: async () => {
    box.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    if (await undo(w.before)) { close(false); retry(); return; }
    if (!box.isConnected) return;
    box.querySelectorAll("button").forEach((b) => { b.disabled = false; });
    text.textContent = t("turn.undoFailed", { version: w.version });  // and nothing was retried
  } }, t("turn.undoRetry"));
  const box = h("div", { class: "notice retry-choice", role: "group", "aria-label": t("reply.retry") }, text,
    h("div", { class: "row" }, first,
      h("button", { type: "button", class: "secondary small-button retry-anyway",
                    onclick: () => { close(false); retry(); } }, t("turn.retryAnyway")),
      h("button", { type: "button", class: "secondary small-button retry-cancel", onclick: () => close(true) }, t("app.cancel"))));
  setTimeout(() => first.focus(), 0);  // once it is in the page
  return box;
}
