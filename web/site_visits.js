// A published site's visits by day (issue 44, point 4), shown beside the deploys of a
// deployed app (app_panels.js), over GET …/analytics (docs/api.md, "Analytics"): the last 30
// UTC days' totals (page views, visitors, bots' views), a word on how they are counted, and a
// small chart, one slot per day: a bar of its page views and, in front of it, a narrower,
// darker one of its visitors (a day without visits is an empty slot). Inline SVG as the
// usage chart draws it (usage_chart.js): role="img" with a label that sums it up, each day's
// <title> its numbers, and a visually-hidden table saying the same to a screen reader.

import { t } from "./i18n.js";
import { compact, h } from "./render.js";

const SVG = "http://www.w3.org/2000/svg";
const CHART = { width: 600, height: 120, top: 14, bottom: 18 };  // viewBox units, as usage_chart.js

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  for (const child of children) el.append(child);
  return el;
}

function dayText(d) {
  return t("visits.day", { day: d.day, views: d.views, visitors: d.visitors, bots: d.botViews });
}

// The chart of a GET …/analytics answer: one slot per day of its range (the answer has them all).
export function visitsChart(answer) {
  const most = Math.max(0, ...answer.days.map((d) => d.views));
  const slot = CHART.width / Math.max(answer.days.length, 1);
  const room = CHART.height - CHART.top - CHART.bottom;
  const base = CHART.top + room;
  const tall = (n) => (n ? Math.max(2, (n / most) * room) : 0);  // a small day stays visible
  const bars = answer.days.map((d, i) => svg("g", { class: d.views ? "usage-day" : "usage-day empty" },
    svg("title", {}, dayText(d)),
    svg("rect", { class: "usage-slot", x: (i * slot).toFixed(2), y: CHART.top, width: slot.toFixed(2), height: room }),
    svg("rect", { class: "usage-bar visits-views", "data-day": d.day, "data-views": d.views,
                  x: (i * slot + slot * 0.15).toFixed(2), y: (base - tall(d.views)).toFixed(2),
                  width: (slot * 0.7).toFixed(2), height: tall(d.views).toFixed(2) }),
    svg("rect", { class: "visits-visitors", "data-day": d.day, "data-visitors": d.visitors,
                  x: (i * slot + slot * 0.3).toFixed(2), y: (base - tall(d.visitors)).toFixed(2),
                  width: (slot * 0.4).toFixed(2), height: tall(d.visitors).toFixed(2) })));
  const { views, visitors } = answer.total;
  const label = views
    ? t("visits.chartLabel", { from: answer.from, to: answer.to, views, visitors, most })
    : t("visits.chartEmpty", { from: answer.from, to: answer.to });
  const chart = svg("svg", { class: "usage-chart visits-chart", role: "img", "aria-label": label,
                             viewBox: `0 0 ${CHART.width} ${CHART.height}`, preserveAspectRatio: "none",
                             "data-days": answer.days.length },
    svg("line", { class: "usage-axis", x1: 0, x2: CHART.width, y1: base + 0.5, y2: base + 0.5 }),
    ...bars);
  const axis = h("div", { class: "usage-axis-labels", "aria-hidden": "true" },
    h("span", {}, answer.from), h("span", {}, most ? t("visits.most", { n: compact(most) }) : ""),
    h("span", {}, answer.to));
  const seen = answer.days.filter((d) => d.views || d.botViews);
  const table = h("table", { class: "visually-hidden" },
    h("caption", {}, t("visits.tableCaption", { from: answer.from, to: answer.to })),
    h("thead", {}, h("tr", {}, ...["dayHead", "views", "visitors", "botViews"].map((k) =>
      h("th", { scope: "col" }, t(`visits.${k}`))))),
    h("tbody", {}, ...seen.map((d) => h("tr", {}, h("th", { scope: "row" }, d.day),
      h("td", {}, String(d.views)), h("td", {}, String(d.visitors)), h("td", {}, String(d.botViews))))));
  return h("figure", { class: "usage-figure" }, chart, axis, table);
}

// The totals, each with its exact number as its title.
function visitsTotals(total) {
  const figure = (key, n) => h("div", { class: "usage-total", "data-total": key },
    h("dt", {}, t(`visits.${key}`)), h("dd", { title: String(n) }, compact(n)));
  return h("dl", { class: "usage-totals" },
    figure("views", total.views), figure("visitors", total.visitors), figure("botViews", total.botViews));
}

// The view: `refresh()` reads GET …/analytics and draws it. A platform that counts no visits
// (404) says so in the view; another failure goes to `report`.
export function visitsView(appId, { api, report }) {
  const range = h("p", { class: "small usage-range" });
  const body = h("div", { class: "usage-body", "aria-live": "polite" });
  const again = h("button", { type: "button", class: "secondary small-button usage-refresh",
                              onclick: () => refresh() }, t("visits.refresh"));
  const el = h("section", { class: "usage-view visits-view", id: "visits-view", "aria-labelledby": "visits-title" },
    h("div", { class: "usage-head" }, h("h3", { id: "visits-title" }, t("visits.title")), again), range, body);
  let asked = 0;  // only the newest question's answer is drawn
  async function refresh() {
    const mine = ++asked;
    el.setAttribute("aria-busy", "true");
    try {
      const answer = await api("GET", `/api/apps/${appId}/analytics?days=30`);
      if (mine !== asked) return;
      range.textContent = t("visits.range", { from: answer.from, to: answer.to });
      const none = answer.total.views || answer.total.botViews ? [] : [h("p", { class: "small usage-none" }, t("visits.none"))];
      body.replaceChildren(visitsTotals(answer.total), h("p", { class: "small visits-private" }, t("visits.private")),
        ...none, visitsChart(answer));
      el.dataset.loaded = String(mine);  // how many times it was drawn: a test waits for a new one
    } catch (err) {
      if (mine !== asked) return;
      if (err && err.status === 404) body.replaceChildren(h("p", { class: "small" }, t("visits.notCounted")));
      else report(err);
    } finally {
      if (mine === asked) el.removeAttribute("aria-busy");
    }
  }
  return { el, refresh };
}
