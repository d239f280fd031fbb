// Keyboard and focus (issue 38): Edit mode's toggle, which stays as the builder set it, and
// where the focus goes once a page opens or a piece of work ends.

import { t } from "./i18n.js";
import { announce } from "./layout.js";

// Edit mode: `on` is the builder's wish, kept until they turn it off (the button, Esc); while
// `paused` (a turn, a restore or a rebuild changes the preview, or the preview is out of date)
// the button is disabled but stays pressed, and the preview's picker is told to stop picking.
// Once the pause ends the picker is told again; a preview that loads meanwhile says "ready"
// and is told then (tell()). The picker obeys only this origin. The message goes to "*": the
// frame may be between documents (its first about:blank, a reload), whose origin no target
// could name (Firefox logs an error for a named one that does not match), and it says only
// "edit on/off".
export function editMode(button, frame) {
  let wanted = false, paused = false;
  const tell = () => {
    if (frame.contentWindow) frame.contentWindow.postMessage({ zerocode: "edit", on: wanted && !paused }, "*");
  };
  const draw = () => {
    button.classList.toggle("edit-on", wanted);
    button.setAttribute("aria-pressed", String(wanted));
    button.textContent = wanted ? t("app.editOn") : t("app.edit");
    button.disabled = paused;
  };
  const mode = {
    get on() { return wanted; },
    get active() { return wanted && !paused; },  // picking now
    tell,
    set(on) {
      if (on === wanted) return;
      wanted = on;
      draw();
      tell();
      announce(t(on ? "edit.onHelp" : "edit.off"));
    },
    pause(off, why) {
      button.title = why;
      if (off === paused) return;
      paused = off;
      draw();
      tell();
    },
  };
  button.addEventListener("click", () => mode.set(!wanted));
  return mode;
}

// Move the focus to `target` unless the builder put it somewhere on purpose: it moves when it
// is nowhere (<body>: what had it was redrawn, hidden or disabled) or in one of `from` (the
// button that started the work, the chat being redrawn). Not scrolled: on a phone the preview
// may be what is on screen.
export function focusNext(target, from = []) {
  const at = document.activeElement;
  if (at && at !== document.body && !from.some((el) => el && el.contains(at))) return;
  target.focus({ preventScroll: true });
}
