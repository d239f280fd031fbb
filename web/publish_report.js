// The publish report beside the deploys (issue 44, point 5): the checks the platform ran on a
// published deploy build (its page's tags, icons, compression, cache headers, crawling, links,
// its console, axe-core's serious accessibility violations), each passed, failed with what is
// wrong and what to change, or not run with why. Made in the background after the deploy:
// "pending" is polled until it is done. app_panels.js puts the section under the deploys table.

import { t } from "./i18n.js";
import { h, when } from "./render.js";
import { tallyShort } from "./checks.js";
import { api, report, sleep } from "./api.js";

const POLL_MS = 1500;
const POLLS = 400;  // ten minutes: a report is bounded well within that

// The section, and show(build): its report drawn there (polled while pending). A newer
// show() wins over an older one still polling.
export function publishReport(appId) {
  const section = h("section", { id: "publish-report", class: "publish-report", "aria-labelledby": "publish-report-title" });
  let asked = 0;
  async function show(build, scroll = false) {
    const mine = ++asked;
    section.dataset.build = build.id;
    if (scroll) section.scrollIntoView({ block: "nearest" });
    section.replaceChildren(heading(build), h("p", { class: "small", id: "report-state" }, t("report.loading")));
    for (let polls = 0; polls < POLLS; polls++) {
      let body;
      try {
        body = await api("GET", `/api/apps/${appId}/deploys/${build.id}/report`);
      } catch (err) {
        if (mine === asked) { report(err); section.replaceChildren(); }
        return;
      }
      if (mine !== asked) return;  // another build was asked for meanwhile
      section.replaceChildren(heading(build, body), ...drawn(body));
      if (body.state !== "pending" || !section.isConnected) return;
      await sleep(POLL_MS);
      if (mine !== asked) return;
    }
  }
  return { section, show };
}

// A deploy's row: its report's button, with the report's tally once it is done.
export function reportButton(build, onclick) {
  const summary = build.report && build.report.state === "done" ? build.report : null;
  return h("button", { type: "button", class: "secondary small-button show-report", onclick },
    t("report.show"),
    summary ? h("span", { "aria-hidden": "true" }, ` ${tallyShort(summary)}`) : null,
    summary ? h("span", { class: "visually-hidden" }, ` (${tallyText(summary)})`) : null);
}

function heading(build, body) {
  const summary = body && body.summary && body.state === "done" ? body.summary : null;
  return h("div", { class: "row checks-head" },
    h("h3", { id: "publish-report-title" }, t("report.title", { when: when(build.createdAt) })),
    summary ? h("span", { class: "small report-tally", title: tallyText(summary) },
      h("span", { "aria-hidden": "true" }, tallyShort(summary)),
      h("span", { class: "visually-hidden" }, tallyText(summary))) : null);
}

function tallyText(summary) {
  return t("report.tally", { passed: summary.passed, failed: summary.failed, notRun: summary.notRun });
}

function drawn(body) {
  if (body.state === "pending") return [h("p", { class: "small", id: "report-state", role: "status" }, t("report.pending"))];
  if (body.state !== "done") return [h("p", { class: "small", id: "report-state" }, t("report.none", { why: body.why || "" }))];
  const checks = body.checks.map((c) => item(c));
  return [h("p", { class: "small", id: "report-state" }, t("report.intro")), h("ul", { class: "checks report-checks" }, ...checks)];
}

// One check: its verdict, its title; what is wrong and what to change (failed), why it was
// not run, or what was seen (passed, folded).
function item(check) {
  const title = t(`report.check.${check.id}`);
  const head = h("div", { class: "row check-head" },
    h("span", { class: `check-status ${check.status}` }, t(`report.status.${check.status}`)),
    h("span", { class: "check-desc" }, title === `report.check.${check.id}` ? check.title : title));
  const parts = [head];
  if (check.status === "failed") {
    parts.push(h("ul", { class: "report-details" }, ...check.details.map((d) => h("li", {}, d))));
    if (check.fix) parts.push(h("p", { class: "report-fix" }, h("b", {}, t("report.fix")), " ", check.fix));
  } else if (check.status === "not_run") {
    parts.push(h("p", { class: "small report-note" }, check.note || ""));
  } else if (check.details.length) {
    parts.push(h("details", { class: "check-spec" }, h("summary", {}, t("report.seen")),
      h("ul", {}, ...check.details.map((d) => h("li", {}, d)))));
  }
  if (check.note && check.status !== "not_run") parts.push(h("p", { class: "small report-note" }, check.note));
  return h("li", { class: `check-item report-check ${check.status}`, "data-check": check.id }, ...parts);
}
