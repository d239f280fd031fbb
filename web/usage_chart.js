// What model requests cost, by day (issue 43): an app's (its Usage tab, app_page.js) and the
// signed-in account's (home.js), over GET …/usage (docs/api.md, "Usage"): the range's
// totals (requests, tokens in and out, cached, the cost where every request had a price,
// "estimated" where the platform counted some) and a small chart, one bar per UTC day of
// the range (input + output tokens; a day without requests shows as an empty slot). The
// chart is inline SVG, role="img" with a label that sums it up; each bar's <title> says
// its day's numbers, and a visually-hidden table says the same to a screen reader.

import { t } from "./i18n.js";
import { compact, dollars, h } from "./render.js";

const SVG = "http://www.w3.org/2000/svg";
const DAY_MS = 86400000;
const CHART = { width: 600, height: 120, top: 14, bottom: 18 };  // viewBox units

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  for (const child of children) el.append(child);
  return el;
}

// Every UTC day from `from` to `to` (YYYY-MM-DD, both included), oldest first.
export function daysOf(from, to) {
  const out = [];
  const last = Date.parse(`${to}T00:00:00Z`);
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= last && out.length < 400; at += DAY_MS) {
    out.push(new Date(at).toISOString().slice(0, 10));
  }
  return out;
}

function tokensOf(day) { return day ? day.inputTokens + day.outputTokens : 0; }

function dayText(day, usage) {
  if (!usage || !usage.requests) return `${day}: ${t("usageView.noRequests")}`;
  return `${day}: ${t("usage.line", { requests: usage.requests, input: compact(usage.inputTokens),
                                       output: compact(usage.outputTokens) })}`;
}

// The chart of a GET …/usage answer: one bar per day of its range.
export function usageChart(answer) {
  const byDay = new Map(answer.days.map((d) => [d.day, d]));
  const days = daysOf(answer.from, answer.to);
  const most = Math.max(0, ...answer.days.map(tokensOf));
  const busiest = answer.days.find((d) => tokensOf(d) === most);
  const slot = CHART.width / Math.max(days.length, 1);
  const room = CHART.height - CHART.top - CHART.bottom;
  const base = CHART.top + room;
  const bars = days.map((day, i) => {
    const usage = byDay.get(day);
    const tokens = tokensOf(usage);
    // A day with tokens is at least 2 units tall, so a small day is not lost beside a big one.
    const tall = tokens ? Math.max(2, (tokens / most) * room) : 0;
    return svg("g", { class: tokens ? "usage-day" : "usage-day empty" },
      svg("title", {}, dayText(day, usage)),
      // the whole slot answers the pointer (its title), an empty day too
      svg("rect", { class: "usage-slot", x: (i * slot).toFixed(2), y: CHART.top, width: slot.toFixed(2), height: room }),
      svg("rect", { class: "usage-bar", "data-day": day, "data-tokens": tokens, x: (i * slot + slot * 0.15).toFixed(2),
                    y: (base - tall).toFixed(2), width: (slot * 0.7).toFixed(2), height: tall.toFixed(2) }));
  });
  const label = answer.days.length
    ? t("usageView.chartLabel", { from: answer.from, to: answer.to, days: answer.days.length,
                                  most: compact(most), day: busiest.day })
    : t("usageView.chartEmpty", { from: answer.from, to: answer.to });
  const chart = svg("svg", { class: "usage-chart", role: "img", "aria-label": label,
                             viewBox: `0 0 ${CHART.width} ${CHART.height}`, preserveAspectRatio: "none",
                             "data-days": days.length },
    svg("line", { class: "usage-axis", x1: 0, x2: CHART.width, y1: base + 0.5, y2: base + 0.5 }),
    ...bars);
  // The axis's words are HTML beside the SVG (a stretched viewBox would stretch its text).
  const axis = h("div", { class: "usage-axis-labels", "aria-hidden": "true" },
    h("span", {}, answer.from), h("span", {}, most ? t("usageView.most", { n: compact(most) }) : ""),
    h("span", {}, answer.to));
  const table = h("table", { class: "visually-hidden" },
    h("caption", {}, t("usageView.tableCaption", { from: answer.from, to: answer.to })),
    h("thead", {}, h("tr", {}, ...["day", "requests", "input", "output", "cached"].map((k) =>
      h("th", { scope: "col" }, t(`usageView.${k}`))))),
    h("tbody", {}, ...answer.days.map((d) => h("tr", {}, h("th", { scope: "row" }, d.day),
      h("td", {}, String(d.requests)), h("td", {}, String(d.inputTokens)), h("td", {}, String(d.outputTokens)),
      h("td", {}, String(d.cachedTokens))))));
  return h("figure", { class: "usage-figure" }, chart, axis, table);
}

// The totals of a GET …/usage answer, as a list of figures (each with its exact number as
// its title), the estimated part said where there is one.
export function usageTotals(total) {
  const figure = (key, shown, exact) => h("div", { class: "usage-total", "data-total": key },
    h("dt", {}, t(`usageView.${key}`)),
    h("dd", { title: exact == null ? null : String(exact), class: exact == null ? "unknown" : null }, shown));
  // A cost only where every request's model had a price (as the per-turn line).
  const priced = total.costUsd != null && !total.unpricedRequests;
  const cost = priced ? dollars(total.costUsd)
    : total.requests ? t("usageView.costUnknown", { n: total.unpricedRequests }) : "—";
  const items = [
    figure("requests", String(total.requests), total.requests),
    figure("input", compact(total.inputTokens), total.inputTokens),
    figure("output", compact(total.outputTokens), total.outputTokens),
    figure("cached", compact(total.cachedTokens), total.cachedTokens),
    figure("cost", cost, priced ? total.costUsd : null),
  ];
  const out = [h("dl", { class: "usage-totals" }, ...items)];
  if (total.estimatedRequests) {
    out.push(h("p", { class: "small usage-estimated", title: t("usage.titleEstimated") },
      `${t("usage.estimated")} ${t("usageView.estimatedWhy", { n: total.estimatedRequests, of: total.requests })}`));
  }
  return out;
}

// A usage view: `load()` answers GET …/usage; `refresh()` reads it again and draws it. A
// platform that keeps no usage (404) says so in the view; another failure goes to `report`.
export function usageView({ id, heading, load, report }) {
  const range = h("p", { class: "small usage-range" });
  const body = h("div", { class: "usage-body", "aria-live": "polite" });
  const again = h("button", { type: "button", class: "secondary small-button usage-refresh",
                              onclick: () => refresh() }, t("usageView.refresh"));
  const el = h("div", { class: "usage-view", id },
    h("div", { class: "usage-head" }, heading, again), range, body);
  let asked = 0;  // only the newest question's answer is drawn
  async function refresh() {
    const mine = ++asked;
    el.setAttribute("aria-busy", "true");
    try {
      const answer = await load();
      if (mine !== asked) return;
      range.textContent = t("usageView.range", { from: answer.from, to: answer.to });
      const none = answer.total.requests ? [] : [h("p", { class: "small usage-none" }, t("usageView.none"))];
      body.replaceChildren(...usageTotals(answer.total), ...none, usageChart(answer));
      el.dataset.loaded = String(mine);  // how many times it was drawn: a test waits for a new one
    } catch (err) {
      if (mine !== asked) return;
      if (err && err.status === 404) body.replaceChildren(h("p", { class: "small" }, t("usageView.notKept")));
      else report(err);
    } finally {
      if (mine === asked) el.removeAttribute("aria-busy");
    }
  }
  return { el, refresh };
}
