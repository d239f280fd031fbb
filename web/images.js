// The Images tab (issue 41): the builder's own images in the app's assets folder, each with
// how a page refers to it; an upload (button or drop) becomes a version and rebuilds the
// preview, as a hand edit does; a picked image of the preview is replaced by an upload.

import { t } from "./i18n.js";
import { h } from "./dom.js";
import { API, failure, headers } from "./api.js";

export function imagesView(appId, { api, report, notify, loadImage, busy, onSaved }) {
  const list = h("ul", { class: "assets", id: "asset-list" });
  const limits = h("p", { class: "small", id: "asset-limits" });
  const file = h("input", { type: "file", accept: "image/png,image/jpeg,image/webp,image/gif,image/avif,image/x-icon",
                            multiple: true, hidden: true, id: "asset-file", "aria-label": t("images.upload") });
  const upload = h("button", { type: "button", id: "asset-upload", onclick: () => file.click() }, t("images.upload"));
  const el = h("div", { id: "images-pane", class: "images-pane" },
    h("div", { class: "row" }, upload, file, h("span", { class: "small" }, t("images.hint"))), limits, list);

  async function refresh() {
    try {
      const got = await api("GET", `/api/apps/${appId}/assets`);
      limits.textContent = t("images.limits", { mb: (got.maxBytes / 1048576).toFixed(0), side: got.maxSide,
        used: (got.appBytes / 1048576).toFixed(1), most: (got.maxAppBytes / 1048576).toFixed(0) });
      list.replaceChildren(...(got.assets.length ? got.assets.map(item) : [h("li", { class: "small" }, t("images.none"))]));
    } catch (err) { report(err); }
  }
  function item(asset) {
    const name = asset.path.split("/").pop();
    const img = h("img", { alt: name, width: Math.min(96, asset.width), loading: "lazy" });
    loadImage(`/api/apps/${appId}/assets/${encodeURIComponent(name)}`).then((url) => { img.src = url; }).catch(() => {});
    return h("li", { "data-path": asset.path }, img,
      h("div", {}, h("code", {}, asset.url),
        h("div", { class: "small" }, `${asset.type} · ${asset.width}×${asset.height} px · ${(asset.bytes / 1024).toFixed(1)} KB`)));
  }
  // One multipart request: the file, and for a replacement the picked element.
  async function send(path, picture, element) {
    const form = new FormData();
    form.append("file", picture, picture.name || "image");
    if (element) form.append("element", JSON.stringify(element));
    const response = await fetch(`${API}${path}`, { method: "POST", body: form, headers: headers() });
    if (!response.ok) throw await failure(response);
    return response.json();
  }
  async function add(files) {
    for (const picture of files) {
      if (busy()) { notify(t("edit.busy"), true); return; }
      try {
        const done = await send(`/api/apps/${appId}/assets`, picture);
        notify(t(done.replaced ? "images.replaced" : "images.uploaded", { url: done.asset.url, version: done.version.id }));
        await onSaved(done);
      } catch (err) { report(err); }
    }
    await refresh();
  }
  async function replacePicked(element, picture) {
    try {
      const done = await send(`/api/apps/${appId}/edits/image`, picture, element);
      notify(t("images.replaced", { url: done.asset.url, version: done.version.id }));
      await onSaved(done);
      await refresh();
    } catch (err) { report(err); }
  }
  file.addEventListener("change", () => { add([...file.files]); file.value = ""; });
  el.addEventListener("dragover", (e) => { if (e.dataTransfer && [...e.dataTransfer.types].includes("Files")) e.preventDefault(); });
  el.addEventListener("drop", (e) => {
    const files = e.dataTransfer ? [...e.dataTransfer.files] : [];
    if (files.length) { e.preventDefault(); add(files); }
  });
  function setBusy(on) { upload.disabled = on; }
  return { el, refresh, setBusy, replacePicked };
}
