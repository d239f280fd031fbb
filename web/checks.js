// Acceptance checks in the console (issue 25): a check's verdict as a line of a turn's
// checklist in the chat, the tally a turn ends with, and the app page's Checks tab (the
// suite: each check's status, steps and expectations, its evidence and screenshot when it
// failed, its history of verdicts, Retire, and whether deploys need passing checks).
// Screenshots are behind the API's bearer auth: they are fetched as blobs (loadImage).

import { t } from "./i18n.js";
import { h } from "./dom.js";

// A verdict's mark, so a status never rests on colour alone.
const MARK = { passed: "✓", failed: "✗", not_run: "–", retired: "⊘" };

export function statusBadge(status) {
  return h("span", { class: `check-status ${status}`, "data-status": status },
    `${MARK[status] || "?"} ${t(`checks.status.${status}`)}`);
}

// "Checks: 3 passed, 1 failed" from a tally {passed, failed, notRun}; "" for none.
export function tallyText(tally) {
  if (!tally) return "";
  const parts = [];
  if (tally.passed) parts.push(t("checks.passedN", { n: tally.passed }));
  if (tally.failed) parts.push(t("checks.failedN", { n: tally.failed }));
  if (tally.notRun) parts.push(t("checks.notRunN", { n: tally.notRun }));
  return parts.length ? t("checks.tally", { parts: parts.join(t("checks.comma")) }) : "";
}

// The builds table's compact form: "✓3 ✗1" ("–2" for checks not run), "—" for none.
export function tallyShort(tally) {
  if (!tally) return "—";
  const parts = [];
  if (tally.passed) parts.push(`✓${tally.passed}`);
  if (tally.failed) parts.push(`✗${tally.failed}`);
  if (tally.notRun) parts.push(`–${tally.notRun}`);
  return parts.join(" ") || "—";
}

export function tallyLabel(tally) {
  return tally ? tallyText(tally) || t("checks.none") : t("checks.noneRan");
}

// -- screenshots ------------------------------------------------------------------------------

// One dialog for every enlarged screenshot: the image, and a Close button.
let viewer = null;
function enlarge(url, alt) {
  if (!viewer) {
    const img = h("img", { alt: "" });
    const close = h("button", { type: "button", class: "secondary close", "aria-label": t("panel.close"),
                                title: t("panel.close") }, "×");
    viewer = h("dialog", { class: "shot-dialog", id: "shot-dialog" }, close, img);
    close.addEventListener("click", () => viewer.close());
    viewer.addEventListener("click", (e) => { if (e.target === viewer) viewer.close(); });
    document.body.append(viewer);
  }
  const img = viewer.querySelector("img");
  img.src = url;
  img.alt = alt;
  viewer.querySelector("button.close").setAttribute("aria-label", t("panel.close"));
  viewer.showModal();
}

// A failed check's screenshot: a thumbnail that enlarges on click. `loadImage(path)` gives
// an object URL for an authenticated image (or throws).
function screenshot(path, description, loadImage) {
  const alt = t("checks.screenshotOf", { description });
  const img = h("img", { class: "shot", alt, loading: "lazy" });
  const button = h("button", { type: "button", class: "shot-button", title: t("checks.enlarge"),
                               "aria-label": `${alt} — ${t("checks.enlarge")}`, disabled: true }, img);
  loadImage(path).then((url) => {
    img.src = url;
    button.disabled = false;
    button.addEventListener("click", () => enlarge(url, alt));
  }).catch(() => button.replaceWith(h("span", { class: "small" }, t("checks.noScreenshot"))));
  return button;
}

// Where, expected, found; and the screenshot when one was kept.
function evidenceView(evidence, description, loadImage) {
  if (!evidence) return null;
  return h("div", { class: "evidence" },
    h("dl", {},
      h("dt", {}, t("checks.where")), h("dd", {}, h("code", {}, evidence.where || "")),
      h("dt", {}, t("checks.expected")), h("dd", { class: "expected" }, evidence.expected || ""),
      h("dt", {}, t("checks.actual")), h("dd", { class: "actual" }, evidence.actual || "")),
    evidence.screenshot ? screenshot(evidence.screenshot, description, loadImage) : null);
}

// -- a turn's checklist in the chat -------------------------------------------------------------

// One `event: check` as a line of the reply's steps: its mark and description, and for a
// failure what was expected and found with a thumbnail of the screenshot.
export function checkItem(data, loadImage) {
  const status = MARK[data.status] ? data.status : "not_run";
  const li = h("li", { class: `check ${status}`, "data-check": data.id, "data-status": status },
    h("span", { class: "check-mark", "aria-hidden": "true" }, MARK[status]), " ",
    h("span", { class: "visually-hidden" }, `${t(`checks.status.${status}`)}: `),
    h("span", { class: "check-id" }, data.id), " ", data.description || "");
  if (status === "not_run" && data.note) li.append(h("span", { class: "small" }, ` — ${data.note}`));
  if (status === "failed") li.append(evidenceView(data.evidence, data.description || data.id, loadImage));
  return li;
}

// -- the Checks tab --------------------------------------------------------------------------

function target(tg) {
  if (!tg || typeof tg !== "object") return "?";
  if ("role" in tg) return tg.name ? `${tg.role} “${tg.name}”` : tg.role;
  if ("label" in tg) return t("checks.t.label", { v: tg.label });
  if ("text" in tg) return t("checks.t.text", { v: tg.text });
  if ("css" in tg) return `css ${tg.css}`;
  return JSON.stringify(tg);
}

// A step as a short sentence: "click button “Add”", "fill label “New todo” with “Buy milk”".
export function stepText(step) {
  if ("goto" in step) return t("checks.s.goto", { path: step.goto });
  if ("wait" in step) return t("checks.s.wait", { ms: step.wait });
  if ("reload" in step) return t("checks.s.reload");
  if ("newVisitor" in step) return t("checks.s.newVisitor");
  if ("fill" in step) return t("checks.s.fill", { target: target(step.fill), value: step.value ?? "" });
  if ("press" in step) return t("checks.s.press", { target: target(step.press), key: step.key ?? "" });
  if ("select" in step) return t("checks.s.select", { target: target(step.select), option: step.option ?? "" });
  if ("click" in step) return t("checks.s.click", { target: target(step.click) });
  return JSON.stringify(step);
}

function how(e) {
  return "equals" in e ? t("checks.e.equals", { v: e.equals }) : t("checks.e.contains", { v: e.contains });
}

// An expectation as a short sentence: "visible: text “Buy milk”", "count of css ul li = 1".
export function expectText(e) {
  if ("noConsoleErrors" in e) return t("checks.e.noConsoleErrors");
  if ("url" in e) return t("checks.e.url", { how: how(e.url || {}) });
  if ("visible" in e) return t("checks.e.visible", { target: target(e.visible) });
  if ("hidden" in e) return t("checks.e.hidden", { target: target(e.hidden) });
  if ("text" in e) return t("checks.e.text", { target: target(e.text), how: how(e) });
  if ("count" in e) return t("checks.e.count", { target: target(e.count), n: e.equals });
  if ("attribute" in e) return t("checks.e.attribute", { target: target(e.attribute), name: e.name, how: how(e) });
  return JSON.stringify(e);
}

// The check's verdicts in its newest runs, newest first: a mark per run, its run and turn
// in its label.
function historyDots(history) {
  if (!history || !history.length) return null;
  return h("ol", { class: "verdicts", "aria-label": t("checks.history") },
    history.map((v) => {
      const label = t("checks.historyRun", { run: v.run, turn: v.turn, status: t(`checks.status.${v.status}`) });
      return h("li", { class: `dot ${v.status}`, title: label, "aria-label": label }, MARK[v.status] || "?");
    }));
}

export function checksView(appId, { api, report, notify, loadImage, busy, onApp, restore }) {
  const requireBox = h("input", { type: "checkbox", id: "require-checks" });
  const requireRow = h("label", { class: "require-checks", for: "require-checks" }, requireBox, " ",
    t("checks.require"));
  const summary = h("p", { class: "small", id: "checks-summary" });
  const list = h("ol", { class: "checks", id: "checks-list" });
  // Runs the checks on the preview now (issue 38): after a hand edit, a restore, or a
  // restart that left them not run; the answer is the suite with the new run.
  const runButton = h("button", { type: "button", class: "secondary small-button", id: "run-checks" },
    t("checks.runNow"));
  const el = h("div", { class: "checks-view", id: "checks-view" },
    h("div", { class: "checks-head" }, requireRow, runButton, summary), list);

  runButton.addEventListener("click", async () => {
    runButton.disabled = true;
    runButton.textContent = t("checks.running");
    try {
      const suite = await api("POST", `/api/apps/${appId}/checks/run`);
      render(suite);
      notify(t("checks.ran", { tally: tallyLabel((suite.runs || [])[0]?.checks) }));
    } catch (err) {
      if (err.status === 409) notify(t("checks.runFailed", { message: err.message }), true);
      else report(err);
    } finally {
      runButton.textContent = t("checks.runNow");
      runButton.disabled = busy();
    }
  });

  requireBox.addEventListener("change", async () => {
    const on = requireBox.checked;
    requireBox.disabled = true;
    try {
      const app = await api("PATCH", `/api/apps/${appId}`, { requireChecks: on });
      if (onApp) onApp(app);
      notify(on ? t("checks.requireOn") : t("checks.requireOff"));
    } catch (err) { requireBox.checked = !on; report(err); } finally { requireBox.disabled = false; }
  });

  // Retire: a reason asked inline, then POST; the API's own message when it refuses.
  function retireForm(check, slot, button, said = "") {
    const reason = h("input", { class: "retire-reason", maxlength: "300", required: true, value: said,
                                "aria-label": t("checks.reasonLabel", { id: check.id }),
                                placeholder: t("checks.reason") });
    const confirm = h("button", { type: "submit", class: "danger small-button retire-confirm" }, t("checks.retire"));
    const form = h("form", { class: "row retire-form", onsubmit: async (e) => {
      e.preventDefault();
      if (!reason.value.trim()) { reason.focus(); return; }
      confirm.disabled = true;
      try {
        await api("POST", `/api/apps/${appId}/checks/${encodeURIComponent(check.id)}/retire`,
                  { reason: reason.value.trim() });
        notify(t("checks.retired", { id: check.id }));
        await refresh();
      } catch (err) {
        confirm.disabled = false;
        if (err.status === 409 || err.status === 404) notify(t("checks.retireFailed", { message: err.message }), true);
        else report(err);
      }
    } }, reason, confirm,
      h("button", { type: "button", class: "secondary small-button", onclick: () => {
        form.remove(); button.hidden = false; button.focus();
      } }, t("app.cancel")));
    button.hidden = true;
    slot.append(form);
    reason.focus();
  }

  // A check the builder's own edit broke (issue 38): the edit is final, so the check follows
  // it (updated to what the page shows, or retired), unless the builder undoes the edit.
  function editChoices(check) {
    const changed = check.editChanged;
    const box = h("div", { class: "edit-changed", role: "group", "aria-label": t("checks.editChanged") },
      h("p", {}, h("b", {}, t("checks.editChanged")), " ", t("checks.editChangedWhy", { version: changed.versionId })));
    const row = h("div", { class: "row" });
    const act = (label, cls, run) => {
      const b = h("button", { type: "button", class: `secondary small-button ${cls}`, disabled: busy() }, label);
      b.addEventListener("click", async () => {
        b.disabled = true;
        try { await run(b); } catch (err) {
          if (err.status === 409 || err.status === 422) notify(t("checks.changeFailed", { message: err.message }), true);
          else report(err);
        } finally { b.disabled = busy(); }
      });
      row.append(b);
    };
    if (changed.updatable) {
      act(t("checks.update"), "update-check", async () => {
        const added = await api("POST", `/api/apps/${appId}/checks/${encodeURIComponent(check.id)}/update`);
        notify(t("checks.updated", { id: check.id, to: added.id }));
        await refresh();
      });
    }
    act(t("checks.retire"), "retire-edit", (b) => retireForm(check, box, b, t("checks.editReason")));
    if (changed.beforeId && restore) {
      act(t("checks.undoEdit", { version: changed.beforeId }), "undo-edit", async () => {
        await restore(changed.beforeId);
        await refresh();
      });
    }
    box.append(row);
    return box;
  }

  function item(check) {
    const last = check.lastRun;
    const body = h("div", { class: "check-body" });
    const head = h("div", { class: "row check-head" }, h("b", { class: "check-id" }, check.id),
      statusBadge(check.status), h("span", { class: "check-desc" }, check.description),
      check.platform ? h("span", { class: "badge platform-check", title: t("checks.platformWhy") },
        t("checks.platform")) : null);
    // The platform's check of the data's rules has no steps to show: the probe is its own.
    const details = check.platform ? h("p", { class: "small" }, t("checks.platformWhy")) : h("details", { class: "check-spec" },
      h("summary", {}, t("checks.spec", { steps: (check.steps || []).length, expect: (check.expect || []).length })),
      (check.steps || []).length ? h("ol", { class: "check-steps", "aria-label": t("checks.steps") },
        check.steps.map((s) => h("li", {}, stepText(s)))) : null,
      h("ul", { class: "check-expect", "aria-label": t("checks.expect") }, (check.expect || []).map((e) => h("li", {}, expectText(e)))));
    body.append(head);
    if (check.retired) {
      body.append(h("p", { class: "small retired-why" },
        t("checks.retiredWhy", { turn: check.retired.turn ?? "?", reason: check.retired.reason })));
    } else if (last) {
      body.append(h("p", { class: "small" }, t("checks.lastRun", { run: last.run, turn: last.turn,
        version: last.versionId || "—" })));
    }
    if (check.status === "failed" && last) body.append(evidenceView(last.evidence, check.description, loadImage));
    if (check.editChanged) body.append(editChoices(check));
    if (check.status === "not_run" && last && last.note) body.append(h("p", { class: "small" }, last.note));
    body.append(details);
    const foot = h("div", { class: "row check-foot" }, historyDots(check.history));
    if (!check.retired && !check.platform) {  // the platform's own checks cannot be retired
      const button = h("button", { type: "button", class: "secondary small-button retire",
                                   "aria-label": t("checks.retireLabel", { id: check.id }), disabled: busy() },
        t("checks.retire"));
      button.addEventListener("click", () => retireForm(check, foot, button));
      foot.append(button);
    }
    body.append(foot);
    return h("li", { class: `check-item ${check.status}`, "data-check": check.id, "data-status": check.status }, body);
  }

  // While a run started by an edit, a restore or a rebuild is under way, the tab asks again
  // until it has ended, so its verdicts show when they come.
  let polling = null;
  function render(suite) {
    requireBox.checked = Boolean(suite.requireChecks);
    const checks = suite.checks || [];
    // Live ones first (failed, not run, passed), retired ones last.
    const order = { failed: 0, not_run: 1, passed: 2, retired: 3 };
    checks.sort((a, b) => (order[a.status] ?? 1) - (order[b.status] ?? 1) ||
      Number(a.id.slice(1)) - Number(b.id.slice(1)));
    const newest = (suite.runs || [])[0];
    summary.textContent = !checks.length ? t("checks.empty")
      : newest ? t("checks.newestRun", { turn: newest.turn, tally: tallyLabel(newest.checks) })
      : t("checks.notYet");
    list.replaceChildren(...checks.map(item));
    runButton.hidden = !checks.some((c) => c.status !== "retired");
    if (suite.running) summary.textContent = t("checks.runningNote");
    clearTimeout(polling);
    polling = suite.running && el.isConnected && !el.hidden ? setTimeout(refresh, 1000) : null;
  }

  async function refresh() {
    try {
      render(await api("GET", `/api/apps/${appId}/checks`));
    } catch (err) {
      if (err.status === 404 && err.code !== "not_found") { list.replaceChildren(); summary.textContent = err.message; }
      else report(err);
    }
  }

  function setBusy(on) {
    list.querySelectorAll("button.retire, .edit-changed button").forEach((b) => { b.disabled = on; });
    runButton.disabled = on;
  }
  return { el, refresh, setBusy };
}

// The tally of a stored reply's newest run: its last group of check lines in a row.
export function checksTallyOf(steps) {
  let group = [], previous = false;
  for (const step of steps) {
    if (step.check && !previous) group = [];
    if (step.check) group.push(step.check.status);
    previous = Boolean(step.check);
  }
  if (!group.length) return null;
  const count = (status) => group.filter((s) => s === status).length;
  return { passed: count("passed"), failed: count("failed"), notRun: count("not_run") };
}
