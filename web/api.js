// The console's link to the API and what every page shares: the token and its headers, an
// answer's failure as an ApiError, images behind the auth, /api/health (the offline model,
// the storage banner), the toast, the session (who is signed in).

import { t } from "./i18n.js";
import { h } from "./dom.js";
import { unreachable } from "./reach.js";  // also: a banner while the server cannot be reached
import { ApiError, explain } from "./messages.js";

export const API = ((window.ZEROCODE_CONFIG && window.ZEROCODE_CONFIG.api) || "").replace(/\/+$/, "");
const toast = document.getElementById("toast");
// Who is signed in (GET /api/users/me), or null: read and set by the pages.
export const session = { me: null };

// -- the API --------------------------------------------------------------------------------

export function token() { return localStorage.getItem("zc_token"); }

export function headers(extra = {}) {
  const h_ = { ...extra };
  if (token()) h_.Authorization = `Bearer ${token()}`;
  return h_;
}

export async function failure(response) {
  let code = "http_error", message = response.statusText || `HTTP ${response.status}`, detail = {};
  try {
    const body = await response.json();
    if (body && body.error) ({ code, message } = detail = body.error);
  } catch (_) { /* not JSON */ }
  if (code === "storage_unavailable") checkStorage();
  return new ApiError(response.status, code, message,
                      Number(response.headers.get("Retry-After") || 0), detail);
}

export async function api(method, path, body) {
  const init = { method, headers: headers(body ? { "Content-Type": "application/json" } : {}) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(API + path, init);
  if (!response.ok) throw await failure(response);
  return response.status === 204 ? null : response.json();
}

// The response itself, for an answer that is not JSON or whose headers matter (the code
// editor's file and its ETag, a save with If-Match).
export async function apiRaw(method, path, { body, headers: extra = {} } = {}) {
  const init = { method, headers: headers({ ...(body !== undefined ? { "Content-Type": "application/json" } : {}), ...extra }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(API + path, init);
  if (!response.ok) throw await failure(response);
  return response;
}

// An image behind the API's auth (a failed check's screenshot, a preview cover) as a data:
// URL: an <img> cannot send the bearer token, and the console's CSP allows data: images,
// not blob: ones.
// Each path is fetched once per page load.
const images = new Map();
export function loadImage(path) {
  const url = /^https?:/.test(path) ? path : API + path;
  if (!images.has(url)) {
    images.set(url, fetch(url, { headers: headers() }).then(async (response) => {
      if (!response.ok) throw await failure(response);
      const blob = await response.blob();
      return new Promise((resolve, reject) => {
        const reader = new FileReader();
        reader.onload = () => resolve(reader.result);
        reader.onerror = () => reject(reader.error);
        reader.readAsDataURL(blob);
      });
    }).catch((err) => { images.delete(url); throw err; }));
  }
  return images.get(url);
}

// What the platform runs (GET /api/health), asked once: whether the offline model answers.
let healthInfo = null;
export function health() {
  if (!healthInfo) healthInfo = api("GET", "/api/health").catch(() => null);
  return healthInfo;
}

// A banner while /api/health says "degraded" (storage cannot take a write, or the data
// directory is short of space): asked at load, every 30 s, and right after any answer with
// the error code storage_unavailable; gone once health says "ok" again. Admins also read why.
export const STORAGE_CHECK_MS = 30000;
const storageBanner = h("div", { id: "storage-banner", role: "status", hidden: true });
document.querySelector("header.top").after(storageBanner);
let storageHealth = null;
let storageAsked = null, storageAgain = false;

export function drawStorage() {
  const degraded = Boolean(storageHealth && storageHealth.status === "degraded");
  storageBanner.hidden = !degraded;
  storageBanner.replaceChildren(...(degraded
    ? [h("b", {}, t("storage.degraded")), " ", t("storage.advice"),
       storageHealth.reason ? h("div", { class: "small" }, t("storage.reason", { reason: storageHealth.reason })) : null]
    : []));
}

// One question at a time; one asked meanwhile is asked again after it (the answer on its
// way may predate the failure that asked).
export function checkStorage() {
  if (storageAsked) { storageAgain = true; return storageAsked; }
  storageAsked = api("GET", "/api/health")
    .then((info) => { storageHealth = info; drawStorage(); })
    .catch(() => { /* no answer: the banner stays as it was */ })
    .finally(() => {
      storageAsked = null;
      if (storageAgain) { storageAgain = false; checkStorage(); }
    });
  return storageAsked;
}

export function notify(text, isError = false) {
  toast.textContent = text;
  toast.className = isError ? "error" : "";
  toast.hidden = false;
  clearTimeout(notify.timer);
  notify.timer = setTimeout(() => { toast.hidden = true; }, isError ? 8000 : 3000);
}

export function clearToast() {
  clearTimeout(notify.timer);
  toast.hidden = true;
}

// A message for the next page (a navigation clears the toast of the page it leaves).
let flashed = null;
export function flash(text) { flashed = text; }
// The message left for this page, once.
export function takeFlash() { const text = flashed; flashed = null; return text; }

export function report(err) {
  notify(unreachable(err) ? t("reach.notSent") : explain(err), true);
  if (err instanceof ApiError && err.status === 401) signOut(false);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// -- session ---------------------------------------------------------------------------------

export async function loadMe() {
  if (!token()) { session.me = null; return; }
  try { session.me = await api("GET", "/api/users/me"); } catch (err) {
    session.me = null;
    if (err instanceof ApiError && err.status === 401) localStorage.removeItem("zc_token");
  }
}

export async function signOut(callApi = true) {
  if (callApi && token()) { try { await api("POST", "/api/users/logout"); } catch (_) { /* gone */ } }
  localStorage.removeItem("zc_token");
  session.me = null;
  location.hash = "#/login";
}
