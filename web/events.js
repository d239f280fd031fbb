// A turn's events as the API streams them (SSE over a fetch, so the bearer token goes
// with it), and a picked element as the API takes it.

// A picked element as the API takes it: the picker's fields cut to size, and the preview
// build it was picked in (`build`: the console's own record of what the frame shows, never
// the frame's word; a stored element, for a Retry, keeps its own).
export function pickedElement(raw, build = undefined) {
  const field = (value, max) => (typeof value === "string" ? value.slice(0, max) : "");
  const el = raw && typeof raw === "object" ? raw : {};
  return { tag: field(el.tag, 40), selector: field(el.selector, 500), text: field(el.text, 500),
           pagePath: field(el.pagePath, 300) || "/", src: field(el.src, 500),
           buildId: build === undefined ? field(el.buildId, 40) : build || "" };
}

export function parseFrames(buffer, onEvent) {
  // SSE: frames end with a blank line; comment lines (keep-alives) start with ":". Each
  // frame of a turn carries its id, "{turn}:{seq}".
  let cut;
  while ((cut = buffer.indexOf("\n\n")) >= 0) {
    const frame = buffer.slice(0, cut);
    buffer = buffer.slice(cut + 2);
    let event = "message", id = ""; const data = [];
    for (const line of frame.split("\n")) {
      if (line.startsWith("id:")) id = line.slice(3).trim();
      else if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    }
    if (data.length) onEvent(event, JSON.parse(data.join("\n")), id);
  }
  return buffer;
}

// Read an SSE response to its end, or until onEvent returns true (the turn's done). Throws
// when the connection breaks.
export async function readEvents(response, onEvent) {
  const reader = response.body.getReader(); const decoder = new TextDecoder();
  let buffer = "", enough = false;
  while (!enough) {
    const chunk = await reader.read();
    if (chunk.done) return;
    buffer = parseFrames(buffer + decoder.decode(chunk.value, { stream: true }), (event, data, id) => {
      if (!enough) enough = onEvent(event, data, id) === true;
    });
  }
  reader.cancel().catch(() => { /* closed already */ });
}

// "{turn}:{seq}" as numbers; zeros for a frame without one.
export function eventId(id) {
  const m = /^(\d+):(\d+)$/.exec(id || "");
  return m ? { turn: Number(m[1]), seq: Number(m[2]) } : { turn: 0, seq: 0 };
}
