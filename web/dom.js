// The one DOM helper every view builds with: h(tag, attrs, ...children). Its own module so
// that render.js (the chat, which draws checks' lines) and checks.js (which builds with h)
// do not import each other.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (value === true) el.setAttribute(key, "");
    else if (value !== false && value != null) el.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child != null) el.append(child instanceof Node ? child : String(child));
  }
  return el;
}
