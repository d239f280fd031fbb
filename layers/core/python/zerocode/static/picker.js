// zerocode preview picker: injected into previews (never into published sites) by the
// sites origin. The console, on another origin, turns edit mode on and off with
// postMessage; while on, hovering outlines an element and clicking one sends its tag,
// a CSS selector, its text and the page path back to the console. Nothing else is exposed.
(function () {
  if (window.parent === window) return;
  var editing = false, hovered = null;
  var STYLE = "2px solid #e8590c";

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
    return (location.hash ? location.hash.slice(1) : "/") || "/";
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
    window.parent.postMessage({zerocode: "picked", element: {
      tag: el.tagName.toLowerCase().slice(0, 40), selector: selectorOf(el),
      text: (el.innerText || el.textContent || "").trim().slice(0, 500), pagePath: pagePath()
    }}, "*");
  }, true);

  window.addEventListener("message", function (e) {
    if (e.source !== window.parent || !e.data || e.data.zerocode !== "edit") return;
    editing = !!e.data.on;
    if (!editing) unmark();
    document.documentElement.style.cursor = editing ? "crosshair" : "";
  });
  window.parent.postMessage({zerocode: "ready", pagePath: pagePath()}, "*");
})();
