// The app page's chat: the history (older pages as it scrolls up), a new turn and its
// stream, following a turn to its end (and one already running, on opening), Stop and Retry.
// Made with the page's shared state (`page`, app_page.js).

import { t } from "./i18n.js";
import { STATUS_OF, badge, entryView, fillReply, foldTurns, h, parseReply, replyShell, tallyLine, usageLine, userBubble } from "./render.js";
import { narrow } from "./layout.js";
import { focusNext } from "./keyboard.js";
import { afterTurn, turnWrote } from "./turns.js";  // what a stopped turn kept, and its undo
import { ApiError } from "./messages.js";
import { API, api, failure, headers, loadImage, report, sleep } from "./api.js";
import { pickedElement } from "./events.js";
import { turnStream } from "./turn_stream.js";

export function makeChat(page) {
  const { appId, messages, input, inputCount, send, stopButton, asked } = page;
  // -- Build or Ask (issue 43) ---------------------------------------------------------------
  // A message goes as a change (Build) or as a question (Ask: the model reads the app with
  // read-only tools and answers; no file changes, no build, no version).
  page.mode = "build";
  const modeButtons = ["build", "ask"].map((mode) => h("button", {
    type: "button", class: "secondary mode", "data-mode": mode, "aria-pressed": String(mode === "build"),
    title: t(`mode.${mode}Hint`), onclick: () => setMode(mode) }, t(`mode.${mode}`)));
  const modeSwitch = h("div", { class: "mode-switch", role: "group", "aria-label": t("mode.label") }, ...modeButtons);
  function setMode(mode) {
    page.mode = mode;
    for (const b of modeButtons) b.setAttribute("aria-pressed", String(b.dataset.mode === mode));
    input.placeholder = t(mode === "ask" ? "mode.askPlaceholder" : "app.ask");
    send.textContent = t(mode === "ask" ? "mode.askSend" : "app.send");
  }
  // -- the chat ----------------------------------------------------------------------------
  // A page of the history drawn (newest last); its entries, newest first.
  async function loadHistory(older) {
    if (page.loadingOlder || (older && !page.before)) return [];
    page.loadingOlder = true;
    const params = new URLSearchParams({ limit: "20" });
    if (older) params.set("before", page.before);
    try {
      const got = await api("GET", `/api/apps/${appId}/history?${params}`);
      const height = messages.scrollHeight;
      messages.prepend(...got.entries.slice().reverse().map(entryView));
      fillPictures();
      foldTurns(messages);  // all but the newest turns, folded to a line each
      for (const e of got.entries) {
        if (e.role === "user") asked.set(e.turn, { content: e.content, element: e.element, images: e.images || [], mode: e.mode || "build" });
      }
      const newest = got.entries[0];
      if (!older && newest && newest.role !== "user" && (newest.status === "failed" || newest.status === "interrupted")) {
        offerRetry(messages.lastElementChild, asked.get(newest.turn), newest.turn);
      }
      page.before = got.nextCursor;
      if (older) messages.scrollTop = messages.scrollHeight - height;
      else messages.scrollTop = messages.scrollHeight;
      // Folded turns are short: a chat that does not fill its box cannot be scrolled up to
      // load the next older page, so that page comes at once.
      if (page.before && messages.clientHeight && messages.scrollHeight <= messages.clientHeight) {
        setTimeout(() => loadHistory(true), 0);
      }
      return got.entries;
    } catch (err) { report(err); return []; } finally { page.loadingOlder = false; }
  }
  // The kept images of messages drawn by digest: fetched with the session (an <img> cannot
  // send the token) once each.
  function fillPictures() {
    for (const img of messages.querySelectorAll("img[data-sha]:not([src])")) {
      loadImage(`/api/apps/${appId}/images/${img.dataset.sha}`).then((url) => { img.src = url; })
        .catch(() => { img.alt = t("attach.gone"); });
    }
  }
  async function reloadHistory() {
    while (page.loadingOlder) await sleep(50);
    messages.replaceChildren();
    page.before = null;
    await loadHistory(false);
  }
  messages.addEventListener("scroll", () => { if (messages.scrollTop < 40) loadHistory(true); });
  // A file's change line links to the diff of the version its turn made: followed here, it
  // opens the Versions tab at that version without leaving the page (and the running turn).
  messages.addEventListener("click", (e) => {
    const link = e.target.closest("a.diff-link");
    if (!link || e.button || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    page.showTab("versions", link.dataset.version);
    if (narrow.matches) page.phone.show("preview", true);
    document.getElementById("tab-versions").focus();
  });

  // The reply as stored, drawn over the live one when its turn ends: the same function draws
  // it after a reload, so the two look the same (steps, outcome lines, badge).
  async function settle(shell, turn) {
    try {
      const got = await api("GET", `/api/apps/${appId}/history?limit=5`);
      const entry = got.entries.find((e) => e.turn === turn && (e.role === "ai" || e.role === "error"));
      if (!entry) return false;
      // The stored check lines carry no screenshot: the live ones (with theirs) stay.
      const live = [...shell.steps.querySelectorAll("li.check")];
      fillReply(shell, parseReply(entry.content), STATUS_OF[entry.status] || "failed", entry.usage);
      const stored = [...shell.steps.querySelectorAll("li.check")];
      if (live.length === stored.length && live.every((li, i) => li.dataset.check === stored[i].dataset.check &&
                                                           li.dataset.status === stored[i].dataset.status)) {
        stored.forEach((li, i) => li.replaceWith(live[i]));
      }
      return true;
    } catch (_) { /* keep the live drawing */ }
    return false;
  }

  // A reply being drawn as its turn's events arrive.
  function liveShell(mode = "build") {
    const shell = replyShell(mode);
    shell.el.dataset.turn = "running";
    messages.append(shell.el);
    foldTurns(messages);
    messages.scrollTop = messages.scrollHeight;
    return shell;
  }

  // Each event of a turn drawn into its reply, a broken stream resumed (turn_stream.js).
  const { streamTurn } = turnStream(page);

  // Stop: the running turn ends interrupted, "stopped by the user"; its stream says so.
  function showStop(turn) {
    page.stoppable = turn;
    page.others.following(turn);
    stopButton.hidden = false;
    stopButton.disabled = false;
  }
  function hideStop() {
    page.stoppable = null;
    stopButton.hidden = true;
  }
  async function stop() {
    if (page.stoppable === null) return;
    stopButton.disabled = true;
    try { await api("POST", `/api/apps/${appId}/turns/${page.stoppable}/cancel`); } catch (err) {
      if (err instanceof ApiError && err.status === 409) return;  // it ended meanwhile
      stopButton.disabled = false;
      report(err);
    }
  }
  stopButton.addEventListener("click", stop);

  // Retry, on the newest reply when its turn failed or was interrupted: a new turn with the
  // same message and element; what the turn kept, with its undo, first (turns.js).
  function offerRetry(el, ask, turn) {
    clearRetry();
    if (!ask) return;
    afterTurn(el, { wrote: turnWrote(api, appId, turn), undo: page.restore,
      retry: async () => chat(ask.content, ask.element ? pickedElement(ask.element) : null, false,
                              await sentAgain(ask.images || []), ask.mode || "build") });
  }
  // A message's images for a Retry: as sent (data URLs), or kept ones fetched again.
  function sentAgain(images) {
    return Promise.all(images.map((image) => typeof image === "string" ? image
      : loadImage(`/api/apps/${appId}/images/${image.sha256}`)));
  }
  function clearRetry() { messages.querySelectorAll(".retry, .turn-kept, .retry-choice").forEach((b) => b.remove()); }

  // Follow a turn to its end, then draw the stored reply over the live one and bring the
  // preview, the code and the versions up to date. Sending waits meanwhile. `ask` is the
  // turn's user message, for a Retry.
  async function follow(shell, response, turn, ask) {
    page.running = true;
    page.framed = false;
    page.showBusy();
    let done = null;
    try {
      done = await streamTurn(shell, response, turn);
      const status = done ? done.status : "lost";
      if (!done || !(await settle(shell, done.turn))) {
        shell.el.append(badge(status));
        shell.el.dataset.turn = status;
      }
      // The suite's verdict on the turn's newest preview, beside its badge.
      if (done && done.checks && !shell.el.querySelector(":scope > .checks-tally")) {
        shell.el.querySelector(":scope > .status").after(tallyLine(done.checks));
      }
      // What the turn's requests cost, as its done said it (the stored entry says the same).
      const spent = done && !shell.el.querySelector(":scope > .usage") ? usageLine(done.usage) : null;
      if (spent) shell.el.append(spent);
      if (status === "failed" || status === "interrupted") offerRetry(shell.el, ask, done.turn);
      messages.scrollTop = messages.scrollHeight;
    } finally {
      page.running = false;
      hideStop();
      page.showBusy();
      // The preview reloads after every turn (unless a build event did already); before the
      // first successful build there is nothing to load, and the placeholder says so.
      // A question's turn changed nothing: the preview keeps what the builder is looking at.
      const asking = (done && done.mode === "ask") || (ask && ask.mode === "ask");
      if (page.hasPreview && !page.framed && !asking) page.loadFrame(true);
      if (!page.hasPreview) page.showPlaceholder(false);
      if (page.currentTab === "code") page.code.refresh();
      if (page.currentTab === "versions") page.versions.refresh();
      if (page.currentTab === "checks") page.checks.refresh();
      page.checkPreview();
      if (done) page.others.tell("ended", done.turn);
      focusNext(input, [send, stopButton, messages]);  // the next message, unless put elsewhere
    }
  }

  // A new turn. `typed`: the message is the composer's, cleared once the turn has started.
  async function chat(text, element, typed, images = null, mode = page.mode) {
    if (page.busy() || !text.trim()) return;
    page.running = true;
    page.showBusy();
    const pictures = images || (typed ? page.attached.take() : []);
    const body = { message: text };
    if (element) body.element = element;
    if (pictures.length) body.images = pictures;
    if (mode === "ask") body.mode = "ask";
    messages.append(userBubble(text, element, pictures, mode));
    const shell = liveShell(mode);
    if (!page.hasPreview) page.showPlaceholder(true);
    let response;
    try {
      response = await fetch(`${API}/api/apps/${appId}/chat`, {
        method: "POST", body: JSON.stringify(body),
        headers: headers({ "Content-Type": "application/json" }) });
      if (!response.ok) throw await failure(response);
    } catch (err) {
      shell.el.dataset.turn = "failed";
      shell.el.append(h("span", { class: "status failed" }, t("reply.notSent")));
      page.running = false;
      page.showBusy();
      if (!page.hasPreview) page.showPlaceholder(false);
      const older = err instanceof ApiError && err.code === "preview_out_of_date";
      if (older) {
        // Picked in an older preview: to be picked again in the one shown now (the frame
        // follows it; a Retry's message waits in the box).
        page.checkPreview();
        if (!typed) { input.value = text; inputCount.update(); }
      } else if (typed && element && element.buildId === page.frameBuild) { page.picked = element; page.showChip(); }
      if (typed) page.attached.put(pictures);  // not sent: the images wait with the message
      report(err);
      return;
    }
    clearRetry();
    if (typed) { input.value = ""; inputCount.update(); page.picked = null; page.showChip(); }
    await follow(shell, response, null, { content: text, element, images: pictures, mode });
  }
  send.addEventListener("click", () => { if (!inputCount.over()) chat(input.value, page.picked, true); });
  // Enter sends (Ctrl/Cmd+Enter too), Shift+Enter breaks the line; an Enter that ends an IME
  // composition (Chinese, Japanese input) only commits the composed text.
  input.addEventListener("keydown", (e) => {
    if (e.key !== "Enter" || e.shiftKey || e.isComposing || e.keyCode === 229) return;
    e.preventDefault();
    if (!inputCount.over()) chat(input.value, page.picked, true);
  });

  // On opening the page (a reload too): a turn still running, started here before or in
  // another tab, is followed live, replayed from its first event. Its message is in the
  // history already (else it is fetched); only its reply is drawn here.
  async function reattach(turn) {
    if (page.busy()) return;
    page.running = true;
    page.showBusy();
    if (!asked.has(turn)) {
      const got = await api("GET", `/api/apps/${appId}/history?limit=5`).catch(() => ({ entries: [] }));
      const mine = got.entries.find((e) => e.turn === turn && e.role === "user");
      if (mine) {
        asked.set(turn, { content: mine.content, element: mine.element, images: mine.images || [], mode: mine.mode || "build" });
        messages.append(entryView(mine));
        fillPictures();
      }
    }
    const ask = asked.get(turn);
    await follow(liveShell(ask ? ask.mode : "build"), null, turn, ask);
  }

  return { loadHistory, reloadHistory, showStop, hideStop, chat, reattach, modeSwitch, setMode };
}
