// Whether the server can be reached (issue 38, "Shutdown in order"): while it is stopped or
// restarting, a banner says so and the server is asked again with backoff (1 s, doubling up
// to 30 s) until it answers; then the banner goes. A fetch that rejects got no answer at all
// (a network failure); any answer, an error status too, means the server is there.

import { t } from "./i18n.js";
import { h } from "./render.js";

const FIRST_MS = 1000;
const MOST_MS = 30000;
const realFetch = window.fetch.bind(window);
let banner = null, probe = "", timer = null, wait = FIRST_MS, down = false;

// The error of a request that got no answer (fetch rejects with a TypeError), as opposed to
// an error answer or an abort.
export function unreachable(err) {
  return err instanceof TypeError;
}

function draw() {
  banner.hidden = !down;
  banner.textContent = down ? t("reach.down") : "";
}

function lost() {
  if (down) return;
  down = true;
  wait = FIRST_MS;
  draw();
  again();
}

function reached() {
  if (!down) return;
  down = false;
  clearTimeout(timer);
  timer = null;
  draw();
}

function again() {
  clearTimeout(timer);
  timer = setTimeout(async () => {
    try {
      await realFetch(probe, { cache: "no-store" });
      reached();
    } catch (_) {
      wait = Math.min(wait * 2, MOST_MS);
      again();
    }
  }, wait);
}

// Every request the console makes tells whether the server answered (installed on import,
// before app.js makes its first); the banner goes under the page's header.
function watch(api, header) {
  probe = `${api}/api/health`;
  banner = h("div", { id: "reach-banner", role: "alert", hidden: true });
  header.after(banner);
  window.fetch = async (...args) => {
    try {
      const response = await realFetch(...args);
      reached();
      return response;
    } catch (err) {
      if (unreachable(err)) lost();
      throw err;
    }
  };
}

watch(((window.ZEROCODE_CONFIG && window.ZEROCODE_CONFIG.api) || "").replace(/\/+$/, ""),
      document.querySelector("header.top"));
