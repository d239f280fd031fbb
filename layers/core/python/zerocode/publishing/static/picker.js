// zerocode preview picker: added to previews (never to published sites). The console, on
// another origin, frames the preview with sandbox="allow-scripts allow-forms" (so this page
// has an opaque origin) and turns edit mode on and off with postMessage; while on, hovering
// outlines an element and clicking one sends its tag, a CSS selector, its text and the page
// path back to the console. Double-clicking an element that holds only text edits it in place:
// Enter sends the new text to the console (which saves it through the API), Esc puts the old
// one back. Esc outside a text edit asks the console to leave edit mode. The keyboard does the
// same (issue 38): while edit mode is on, Tab and Shift+Tab move through the page's pickable
// elements (each given tabindex=0 and a visible outline, taken back when edit mode goes off),
// Enter picks the focused one, F2 edits its text in place. Nothing else is exposed.
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
  var editing = false, hovered = null, focused = null, typing = null; // typing: edited in place
  var pickTimer = null, watcher = null;
  var STYLE = "2px solid #e8590c", FOCUS_STYLE = "3px solid #e8590c";
  var own = new WeakMap(); // an outlined element's own inline outline, put back after

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

  // The hovered and the focused element are outlined; an element neither has its own back.
  function paint(el) {
    if (!el) return;
    var on = el === focused ? FOCUS_STYLE : el === hovered ? STYLE : null;
    if (on && !own.has(el)) own.set(el, el.style.outline);
    if (on) { el.style.outline = on; return; }
    if (own.has(el)) { el.style.outline = own.get(el); own.delete(el); }
  }

  function unmark() {
    var was = [hovered, focused];
    hovered = focused = null;
    paint(was[0]); paint(was[1]);
  }

  document.addEventListener("mouseover", function (e) {
    if (!editing || !(e.target instanceof Element)) return;
    var was = hovered;
    hovered = e.target;
    paint(was); paint(hovered);
  }, true);

  // What Tab stops at in edit mode: what holds text of its own, media, controls and the
  // page's sections (a mouse can pick any element; the keyboard gets the meaningful ones).
  var STOPS = /^(A|BUTTON|INPUT|SELECT|TEXTAREA|IMG|PICTURE|VIDEO|AUDIO|CANVAS|SVG|IFRAME|HEADER|FOOTER|NAV|MAIN|SECTION|ARTICLE|ASIDE|FORM|UL|OL|TABLE|FIGURE)$/;
  var SKIP = /^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE|HEAD|META|LINK|BR|HR|OPTION)$/;
  function pickable(el) {
    var tag = el.tagName.toUpperCase();
    if (SKIP.test(tag) || !el.getClientRects().length) return false;
    if (STOPS.test(tag)) return true;
    for (var n = el.firstChild; n; n = n.nextSibling) {
      if (n.nodeType === 3 && n.nodeValue.trim()) return true;
    }
    return false;
  }

  // tabindex=0 on the pickable elements that have no tabindex of their own, marked so that
  // only those are taken back. Pages that change (a Vue route) are marked again.
  function markStops() {
    if (!document.body) return;
    var all = document.body.querySelectorAll("*");
    for (var i = 0; i < all.length; i++) {
      var el = all[i];
      if (!el.hasAttribute("tabindex") && pickable(el)) {
        el.setAttribute("tabindex", "0");
        el.setAttribute("data-zc-stop", "");
      }
    }
  }

  function unmarkStops() {
    var marked = document.querySelectorAll("[data-zc-stop]");
    for (var i = 0; i < marked.length; i++) {
      marked[i].removeAttribute("tabindex");
      marked[i].removeAttribute("data-zc-stop");
    }
  }

  function keyboard(on) {
    if (watcher) { watcher.disconnect(); watcher = null; }
    if (!on) { unmarkStops(); return; }
    markStops();
    var queued = false;
    watcher = new MutationObserver(function () {
      if (queued) return;
      queued = true;
      setTimeout(function () { queued = false; if (editing) markStops(); }, 50);
    });
    watcher.observe(document.body || document.documentElement, {childList: true, subtree: true});
  }

  document.addEventListener("focusin", function (e) {
    if (!editing || !(e.target instanceof Element) || e.target === document.body) return;
    var was = focused;
    focused = e.target;
    paint(was); paint(focused);
  }, true);

  document.addEventListener("focusout", function (e) {
    if (e.target !== focused) return;
    focused = null;
    paint(e.target);
  }, true);

  function described(el) {
    return {
      tag: el.tagName.toLowerCase().slice(0, 40), selector: selectorOf(el),
      text: (el.innerText || el.textContent || "").trim().slice(0, 500), pagePath: pagePath(),
      src: el.tagName === "IMG" ? (el.getAttribute("src") || "").slice(0, 500) : ""
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

  // A text edited in place, from a double-click or F2: Enter sends it, Esc puts the old back.
  function startTyping(el) {
    clearTimeout(pickTimer);  // an edit is no pick
    var was = hovered;
    hovered = null;
    paint(was);
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
  }

  document.addEventListener("dblclick", function (e) {
    if (!editing || typing || !(e.target instanceof Element) || !textOnly(e.target)) return;
    e.preventDefault();
    e.stopPropagation();
    startTyping(e.target);
  }, true);

  document.addEventListener("keydown", function (e) {
    if (editing && !typing && e.key === "Escape") send({zerocode: "escape"});
  });

  // Enter picks the focused element (as a click does, at once: no double-click can follow),
  // F2 edits its text in place. Captured first: the page's own handlers wait, as for clicks.
  document.addEventListener("keydown", function (e) {
    var el = document.activeElement;
    if (!editing || typing || e.isComposing || e.altKey || e.ctrlKey || e.metaKey) return;
    if (!(el instanceof Element) || el === document.body || el === document.documentElement) return;
    if (e.key === "Enter") {
      e.preventDefault();
      e.stopPropagation();
      clearTimeout(pickTimer);
      send({zerocode: "picked", element: described(el), keyboard: true});
    } else if (e.key === "F2" && textOnly(el)) {
      e.preventDefault();
      e.stopPropagation();
      startTyping(el);
    }
  }, true);

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
    if (editing === !!e.data.on) return;  // told again (the console repeats itself)
    editing = !!e.data.on;
    if (!editing) { unmark(); stopTyping(false); }
    keyboard(editing);
    document.documentElement.style.cursor = editing ? "crosshair" : "";
  });
  send({zerocode: "ready", pagePath: pagePath()});
})();
