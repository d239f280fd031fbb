// Images on a message (issue 41): a file button, paste and drop put up to four on the next
// message, each scaled down in the browser first (so four fit the API's request bound), shown
// as thumbnails that can be taken off; the API re-checks every one and says why it refuses.

import { t } from "./i18n.js";
import { h } from "./dom.js";
import { notify } from "./api.js";

export const MOST = 4;  // images a message carries (ZEROCODE_CHAT_IMAGES_MAX's default)
const SIDE = 2048;  // longest side sent: what a model looks at, at most
const BYTES = 1_400_000;  // under ZEROCODE_CHAT_IMAGE_MAX_BYTES (1.5 MiB) once decoded
const TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"];

// A picture as a data URL a model takes: as it is when small and of a type every model
// reads, else drawn again, scaled to SIDE, as PNG (transparent or small) or JPEG.
export async function shrink(file) {
  const original = await asDataUrl(file);
  const bitmap = await createImageBitmap(file);
  const scale = Math.min(1, SIDE / Math.max(bitmap.width, bitmap.height));
  if (scale === 1 && file.size <= BYTES && TYPES.includes(file.type) && file.type !== "image/gif") {
    bitmap.close();
    return original;
  }
  const canvas = document.createElement("canvas");
  canvas.width = Math.max(1, Math.round(bitmap.width * scale));
  canvas.height = Math.max(1, Math.round(bitmap.height * scale));
  canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  const png = canvas.toDataURL("image/png");
  if (png.length * 0.75 <= BYTES) return png;
  for (const quality of [0.85, 0.7, 0.5]) {
    const jpeg = canvas.toDataURL("image/jpeg", quality);
    if (jpeg.length * 0.75 <= BYTES) return jpeg;
  }
  throw new Error(t("attach.tooBig", { name: file.name }));
}

function asDataUrl(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

// The composer's images: `strip` shows them; `button` adds some; `take()` hands them to a
// message and clears the strip; paste and drop on `target` add too.
export function attachments(target) {
  const items = [];  // data URLs, in order
  const strip = h("div", { class: "attached", id: "attached", hidden: true, "aria-live": "polite" });
  const picker = h("input", { type: "file", accept: "image/*", multiple: true, hidden: true,
                              id: "attach-file", "aria-label": t("attach.add") });
  const button = h("button", { type: "button", class: "secondary", id: "attach",
                               title: t("attach.hint"), onclick: () => picker.click() }, t("attach.add"));
  function draw() {
    strip.replaceChildren(...items.map((url, i) => h("span", { class: "thumb" },
      h("img", { src: url, alt: t("attach.image", { n: i + 1 }) }),
      h("button", { type: "button", class: "remove", "aria-label": t("attach.remove", { n: i + 1 }),
                    onclick: () => { items.splice(i, 1); draw(); } }, "×"))));
    strip.hidden = items.length === 0;
    button.disabled = items.length >= MOST;
  }
  async function add(files) {
    for (const file of files) {
      if (!file.type.startsWith("image/")) { notify(t("attach.notImage", { name: file.name }), true); continue; }
      if (items.length >= MOST) { notify(t("attach.tooMany", { most: MOST }), true); break; }
      try { items.push(await shrink(file)); } catch (err) { notify(err.message || String(err), true); }
      draw();
    }
  }
  picker.addEventListener("change", () => { add([...picker.files]); picker.value = ""; });
  target.addEventListener("paste", (e) => {
    const files = [...(e.clipboardData ? e.clipboardData.files : [])].filter((f) => f.type.startsWith("image/"));
    if (files.length) { e.preventDefault(); add(files); }
  });
  target.addEventListener("dragover", (e) => { if (e.dataTransfer && [...e.dataTransfer.types].includes("Files")) e.preventDefault(); });
  target.addEventListener("drop", (e) => {
    const files = e.dataTransfer ? [...e.dataTransfer.files] : [];
    if (files.length) { e.preventDefault(); add(files); }
  });
  return {
    strip, picker, button, add,
    take() { const taken = items.splice(0); draw(); return taken; },
    put(urls) { items.splice(0, items.length, ...urls.slice(0, MOST)); draw(); },
  };
}
