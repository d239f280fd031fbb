// Following a turn: its events drawn into its reply as they come (the chat's own stream, a
// resumed one, a replay), a broken stream picked up again after the last event seen.
// Made with the app page's shared state (`page`).

import { t } from "./i18n.js";
import { drawCheck, drawStreaming, h, markdown, stepItem, toolStep } from "./render.js";
import { checkItem } from "./checks.js";
import { ApiError } from "./messages.js";
import { API, checkStorage, failure, headers, loadImage, report, sleep } from "./api.js";
import { eventId, readEvents } from "./events.js";

// { streamTurn }
export function turnStream(page) {
  const { appId, messages } = page;
  // What each event of a turn adds to its reply: one drawing for the chat's own stream, a
  // resumed one and a replay (a reattach after a reload).
  function replyDrawer(shell) {
    let said = "", buildLine = null;
    const tools = new Map();
    return (event, data) => {
      if (event === "message") {
        said += data.d;
        // An html / multi-file answer's code streams folded; its stored reply says what it did.
        if (page.app.codeGenType === "vue_project") shell.answer.innerHTML = markdown(said);
        else drawStreaming(shell.answer, said);
      }
      else if (event === "thinking") {
        shell.thinking.hidden = false; shell.thinking.lastChild.textContent += data.text;
      } else if (event === "tool") {
        const step = data.phase === "call"
          ? { state: "running", label: `${data.name}${data.path ? " " + data.path : ""}` }
          : toolStep(data.name, data.ok, data.summary);
        const item = stepItem(step);
        const old = tools.get(data.id);
        if (old) old.replaceWith(item); else shell.steps.append(item);
        tools.set(data.id, item);
      } else if (event === "build") {
        const label = data.status === "running" ? t("step.buildRunning")
          : data.status === "succeeded" ? t("step.buildOk")
          : t("step.buildFailed") + (data.error || data.log_tail
            ? ` — ${data.error || data.log_tail.split("\n").slice(-3).join(" ")}` : "");
        const state = data.status === "running" ? "running" : data.status === "succeeded" ? "ok" : "failed";
        const item = stepItem({ state, label });
        if (buildLine) buildLine.replaceWith(item); else shell.steps.append(item);
        buildLine = item;
        // The preview shows a new build at once, not only when the turn ends.
        if (data.status === "succeeded") { page.hasPreview = true; page.heard(data.buildId); page.loadFrame(true); page.framed = true; }
      } else if (event === "check") {
        drawCheck(shell.steps, checkItem(data, loadImage), data.id);
      } else if (event === "repair") {
        shell.steps.append(stepItem({ state: "repair", label: t(data.kind === "acceptance" ? "step.repairChecks" : "step.repair",
          { attempt: data.attempt, max: data.max, why: data.reason }) }));
        buildLine = null;  // the repaired code gets a build line of its own
      } else if (event === "error") {
        if (data.code === "storage_unavailable") checkStorage();
        const p = h("p", { class: "outcome-failed" });
        // A stop is an interruption, worded as the stored reply will say it.
        p.innerHTML = markdown(t(data.code === "stopped" ? "reply.interrupted" : "reply.failed",
                                 { why: data.message }));
        shell.outcome.append(p);
      }
      messages.scrollTop = messages.scrollHeight;
    };
  }

  // A turn's events after `after`, then live until its done (GET …/turns/{turn}/events).
  async function turnEvents(turn, after) {
    const response = await fetch(`${API}/api/apps/${appId}/turns/${turn}/events?after=${after}`,
                                 { headers: headers() });
    if (!response.ok) throw await failure(response);
    return response;
  }

  const RESUMES = 5;  // a broken stream is picked up again up to this many times in a row

  // Draw a turn's events into its reply until its done; the done, or null when the turn
  // could not be followed to its end. The stream is the chat's own, or (null) the turn's
  // events from the first. The turn runs on whatever becomes of a stream: one that breaks
  // before done (a dropped network, a proxy's timeout) is resumed after the last event seen,
  // so nothing is lost and nothing drawn twice. The turn's number comes with the first id.
  // A page left (another route) stops following.
  async function streamTurn(shell, response, turn) {
    const draw = replyDrawer(shell);
    const left = () => !shell.el.isConnected;
    let seq = 0, done = null;
    for (let misses = 0; ;) {
      const from = seq;
      try {
        await readEvents(response || await turnEvents(turn, seq), (event, data, id) => {
          if (left()) return true;
          const at = eventId(id);
          if (at.seq) {
            if (at.seq <= seq) return false;  // seen already
            turn = at.turn; seq = at.seq;
          }
          if (turn && page.stoppable === null) page.showStop(turn);
          if (event !== "done") { draw(event, data); return false; }
          done = data;
          page.hideStop();
          return true;
        });
      } catch (err) {
        const refused = err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429;
        if (refused) { report(err); return null; }  // gone, not yours: asking again will not help
      }
      if (done) return done;
      response = null;
      misses = seq > from ? 1 : misses + 1;
      if (!turn || misses > RESUMES || left()) return null;
      await sleep(300 * 2 ** (misses - 1));
    }
  }

  return { streamTurn };
}
