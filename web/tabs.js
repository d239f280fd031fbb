// Many tabs, one truth (issue 38, point 4): every page open on an app follows the app's
// turns, whichever tab, browser or device started them, and catches up with a restore or
// an edit made elsewhere. Tabs of one browser tell each other at once on the
// BroadcastChannel "zerocode" ({app, kind, turn}: a turn started or ended, the files
// changed); other browsers are noticed by a light poll of GET …/turns/current, every
// POLL_MS while the page is shown and idle, paused while it is hidden. A notice is only a
// reason to ask: which turn runs is always the server's word, so a late or repeated notice
// follows nothing twice.

export const POLL_MS = 4000;  // 15 requests a minute from an open, idle, visible app page
const CHANNEL = "zerocode";

// config.js may set `turnPollMs` (0: no poll; another device's turn then shows on a reload,
// or once the page starts something itself), read at each tick.
function pollMs() {
  const ms = (window.ZEROCODE_CONFIG || {}).turnPollMs;
  return Number.isFinite(ms) && ms >= 0 ? ms : POLL_MS;
}

// `alive()`: the page is still shown (a page left stops listening and polling); `idle()`:
// nothing runs here (a turn, a restore, a rebuild, a save); `follow(turn)`: follow that
// running turn; `catchUp()`: read the history, the preview and the shown tab again.
export function otherTabs(appId, { api, alive, idle, follow, catchUp }) {
  const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(CHANNEL) : null;
  const mine = new Set();  // turns this page follows or followed: their ends are its own
  let timer = null, asking = false, again = false, owed = false;

  function close() {
    clearTimeout(timer);
    timer = null;
    if (channel) channel.close();
    document.removeEventListener("visibilitychange", shown);
  }
  function live() {
    if (!alive()) close();
    return alive();
  }
  // Which turn runs, asked of the server; one question at a time (one asked meanwhile is
  // asked again after it: the answer on its way may predate the notice). `polled`: asked
  // by the poll, which may have been turned off while the question was on its way.
  async function ask(polled = false) {
    if (asking) { again = true; return; }
    if (!idle()) return;
    asking = true;
    try {
      const current = await api("GET", `/api/apps/${appId}/turns/current`);
      const wanted = current && current.turn && !mine.has(current.turn) && (!polled || pollMs());
      if (wanted && live() && idle()) follow(current.turn);
    } catch (_) { /* asked again at the next tick */ } finally {
      asking = false;
      if (again) { again = false; ask(); }
    }
  }
  // A change made elsewhere while this page was busy is caught up with once it is idle.
  function settle() {
    if (owed && idle() && live()) { owed = false; catchUp(); }
  }
  async function tick() {
    timer = null;
    if (!live()) return;
    settle();
    if (!document.hidden && pollMs()) await ask(true);
    schedule(pollMs() || POLL_MS);
  }
  function schedule(ms) {
    if (!timer && !document.hidden && alive()) timer = setTimeout(tick, ms);
  }
  function shown() {
    if (document.hidden) { clearTimeout(timer); timer = null; } else schedule(0);
  }
  if (channel) {
    channel.onmessage = (e) => {
      const m = e.data && typeof e.data === "object" ? e.data : {};
      if (m.app !== appId || !live()) return;
      const turn = Number.isInteger(m.turn) && m.turn > 0 ? m.turn : null;
      if (m.kind === "turn" && !(turn && mine.has(turn))) ask();  // hidden too: it is one request
      else if ((m.kind === "ended" && !(turn && mine.has(turn))) || m.kind === "changed") {
        owed = true;
        settle();
      }
    };
  }
  document.addEventListener("visibilitychange", shown);
  schedule(pollMs() || POLL_MS);
  return {
    // This page follows `turn` (it started it, or follows another's): tell the others.
    following(turn) {
      if (mine.has(turn)) return;
      mine.add(turn);
      if (channel) channel.postMessage({ app: appId, kind: "turn", turn });
    },
    // A turn this page followed has ended, or it changed the files itself (a restore, an
    // edit: `turn` null): the other pages read what changed.
    tell(kind, turn = null) {
      if (turn) mine.add(turn);
      if (channel) channel.postMessage({ app: appId, kind, turn });
    },
    settle,  // this page has become idle: a change owed is caught up with now
  };
}
