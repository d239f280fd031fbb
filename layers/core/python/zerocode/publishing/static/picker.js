// zerocode preview picker: added to previews (never to published sites). The console, on
// another origin, frames the preview with sandbox="allow-scripts allow-forms" (so this page
// has an opaque origin) and turns edit mode on and off with postMessage; while on, hovering
// outlines an element and clicking one sends its tag, a CSS selector, its text and the page
// path back to the console. Double-clicking an element that holds only text edits it in place:
// Enter sends the new text to the console (which saves it through the API), Esc puts the old
// one back. Esc outside a text edit asks the console to leave edit mode. Nothing else is
// exposed.
//
// Commands are obeyed only from the parent window and only from a console origin: those the
// platform wrote into CONSOLES (a configured value), or, where it wrote none (the copy in AWS
// preview builds), the one origin the console names in the frame's name, which stays with the
// frame while its pages change. Messages go to that origin only, never to "*".
(function () {
  if (window.parent === window) return;
  var CONSOLES = [/*zerocode:consoles*/];
  var NAME = "zerocode-console ";
  var ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?$/;
  var allowed = CONSOLES.filter(function (o) { return ORIGIN.test(o); });
  var named = typeof window.name === "string" && window.name.indexOf(NAME) === 0
    ? window.name.slice(NAME.length) : "";
  if (!CONSOLES.length && ORIGIN.test(named)) allowed = [named];
  if (!allowed.length) return;
  var consoleOrigin = null; // the allowed origin commands came from
  var editing = false, hovered = null, typing = null; // typing: the element edited in place
  var pickTimer = null;
  var STYLE = "2px solid #e8590c";

  function send(message) {
    var targets = consoleOrigin ? [consoleOrigin] : allowed;
    // A target origin that is not the parent's drops the message: only the console gets it.
    for (var i = 0; i < targets.length; i++) window.parent.postMessage(message, targets[i]);
  }

  function selectorOf(el) {
    var parts = [];
    while (el && el.nodeType === 1 && el !== document.body && parts.length < 8) {
      if (el.id) { parts.unshift("#" + CSS.escape(el.id)); break; }
      var tag = el.tagName.toLowerCase(), index = 1, sib = el;
      while ((sib = sib.previousElementSibling)) if (sib.tagName === el.tagName) index++;
      parts.unshift(tag + ":nth-of-type(" + index + ")");
      el = el.parentElement;
    }
    return parts.join(" > ").slice(0, 500);
  }

  function pagePath() {
    return ((location.hash ? location.hash.slice(1) : "/") || "/").slice(0, 300);
  }

  function unmark() {
    if (hovered) { hovered.style.outline = hovered.dataset.zcOutline || ""; hovered = null; }
  }

  document.addEventListener("mouseover", function (e) {
    if (!editing || !(e.target instanceof Element)) return;
    unmark();
    hovered = e.target;
    hovered.dataset.zcOutline = hovered.style.outline;
    hovered.style.outline = STYLE;
  }, true);

  function described(el) {
    return {
      tag: el.tagName.toLowerCase().slice(0, 40), selector: selectorOf(el),
      text: (el.innerText || el.textContent || "").trim().slice(0, 500), pagePath: pagePath()
    };
  }

  // Only an element that holds text and no other element is edited in place: its text is
  // what the source writes between two tags, or nothing the platform can change alone.
  function textOnly(el) {
    return el.children.length === 0 && (el.textContent || "").trim().length > 0 &&
      ["SCRIPT", "STYLE", "TEXTAREA", "INPUT", "SELECT", "OPTION"].indexOf(el.tagName) < 0;
  }

  function stopTyping(keep) {
    var el = typing;
    if (!el) return;
    typing = null;
    el.removeAttribute("contenteditable");
    if (!keep) el.textContent = el.dataset.zcText || el.textContent;
    delete el.dataset.zcText;
  }

  document.addEventListener("dblclick", function (e) {
    if (!editing || typing || !(e.target instanceof Element) || !textOnly(e.target)) return;
    clearTimeout(pickTimer);  // a double-click edits; it does not pick
    e.preventDefault();
    e.stopPropagation();
    var el = e.target;
    unmark();
    typing = el;
    el.dataset.zcText = el.textContent;
    var before = described(el);
    el.setAttribute("contenteditable", "plaintext-only");
    if (el.contentEditable !== "plaintext-only") el.setAttribute("contenteditable", "true");
    el.focus();
    var range = document.createRange();
    range.selectNodeContents(el);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    el.addEventListener("blur", function () { if (typing === el) stopTyping(false); }, { once: true });
    el.addEventListener("keydown", function (k) {
      if (typing !== el || k.isComposing) return;
      if (k.key === "Escape") { k.preventDefault(); k.stopPropagation(); stopTyping(false); }
      if (k.key === "Enter") {
        k.preventDefault();
        var text = (el.innerText || el.textContent || "").replace(/\s+/g, " ").trim();
        stopTyping(true);
        if (text && text !== before.text) {
          send({zerocode: "textEdit", element: before, newText: text.slice(0, 2000),
                page: location.pathname.slice(0, 300)});
        } else {
          el.textContent = el.dataset.zcText || before.text;
        }
      }
    });
  }, true);

  document.addEventListener("keydown", function (e) {
    if (editing && !typing && e.key === "Escape") send({zerocode: "escape"});
  });

  document.addEventListener("click", function (e) {
    if (!editing || !(e.target instanceof Element)) return;
    if (typing && typing.contains(e.target)) return; // placing the caret in the text edited
    e.preventDefault();
    e.stopPropagation();
    // Sent once a double-click can no longer follow: picking moves the focus to the console's
    // message box, which would end a text edit the double-click starts.
    var el = e.target;
    clearTimeout(pickTimer);
    pickTimer = setTimeout(function () { send({zerocode: "picked", element: described(el)}); }, 350);
  }, true);

  window.addEventListener("message", function (e) {
    if (e.source !== window.parent || allowed.indexOf(e.origin) < 0) return;
    if (!e.data || e.data.zerocode !== "edit") return;
    consoleOrigin = e.origin;
    editing = !!e.data.on;
    if (!editing) { unmark(); stopTyping(false); }
    document.documentElement.style.cursor = editing ? "crosshair" : "";
  });
  send({zerocode: "ready", pagePath: pagePath()});
})();
