// zerocode preview picker: added to previews (never to published sites). The console, on
// another origin, frames the preview with sandbox="allow-scripts allow-forms" (so this page
// has an opaque origin) and turns edit mode on and off with postMessage; while on, hovering
// outlines an element and clicking one sends its tag, a CSS selector, its text and the page
// path back to the console. Nothing else is exposed.
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
  var editing = false, hovered = null;
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

  document.addEventListener("click", function (e) {
    if (!editing || !(e.target instanceof Element)) return;
    e.preventDefault();
    e.stopPropagation();
    var el = e.target;
    send({zerocode: "picked", element: {
      tag: el.tagName.toLowerCase().slice(0, 40), selector: selectorOf(el),
      text: (el.innerText || el.textContent || "").trim().slice(0, 500), pagePath: pagePath()
    }});
  }, true);

  window.addEventListener("message", function (e) {
    if (e.source !== window.parent || allowed.indexOf(e.origin) < 0) return;
    if (!e.data || e.data.zerocode !== "edit") return;
    consoleOrigin = e.origin;
    editing = !!e.data.on;
    if (!editing) unmark();
    document.documentElement.style.cursor = editing ? "crosshair" : "";
  });
  send({zerocode: "ready", pagePath: pagePath()});
})();
