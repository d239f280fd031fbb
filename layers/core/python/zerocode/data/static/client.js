// zerocode's data client: an app's records and its own users, on the app's own origin.
// The platform serves it at /_api/client.js on every app's origin (docs/data.md); an app
// imports it, from a plain page or from Vue:
//
//   import { data, auth } from "/_api/client.js";
//   const { records } = await data.list("entries", { sort: "-createdAt", limit: 20 });
//   await data.create("entries", { message: "Hello" });
//   await auth.signUp("ada", "a long password");   // then auth.me() is { id, username, ... }
//
// Every call either gives what the platform answered or throws a DataError whose status
// and code are the platform's (400 invalid_input naming the field, 401 sign_in_needed,
// 403 not_allowed, 404 not_found, 409, 413, 429), and whose message says why.

const API = "/_api";

export class DataError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = "DataError";
    this.status = status;
    this.code = code;
  }
}

async function call(method, path, body) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" } };
  if (method === "POST" || method === "PATCH") {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body === undefined ? {} : body);
  }
  let response;
  try {
    response = await fetch(API + path, init);
  } catch (e) {
    throw new DataError(0, "network", "the app's server could not be reached: " + e.message);
  }
  const text = await response.text();
  let answer = null;
  try {
    answer = text ? JSON.parse(text) : null;
  } catch (e) {
    answer = null;
  }
  if (!response.ok) {
    const error = (answer && answer.error) || {};
    throw new DataError(response.status, error.code || "http_" + response.status,
                        error.message || response.statusText || "the request failed");
  }
  return answer;
}

const part = (value) => encodeURIComponent(String(value));

export const data = {
  // { records: [...], cursor }: where (field equality), sort ("createdAt" or "-createdAt"),
  // limit (1-100, 20 by default), cursor (the last page's, for the next page).
  list(collection, { where = {}, sort, limit, cursor } = {}) {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(where)) query.set(name, String(value));
    if (sort) query.set("sort", sort);
    if (limit) query.set("limit", String(limit));
    if (cursor) query.set("cursor", cursor);
    const text = query.toString();
    return call("GET", `/data/${part(collection)}${text ? "?" + text : ""}`);
  },
  get(collection, id) {
    return call("GET", `/data/${part(collection)}/${part(id)}`);
  },
  create(collection, fields) {
    return call("POST", `/data/${part(collection)}`, fields);
  },
  // Only the fields given change; a field set to null is removed.
  update(collection, id, fields) {
    return call("PATCH", `/data/${part(collection)}/${part(id)}`, fields);
  },
  async remove(collection, id) {
    await call("DELETE", `/data/${part(collection)}/${part(id)}`);
  },
};

export const auth = {
  async signUp(username, password) {
    return (await call("POST", "/auth/signup", { username, password })).user;
  },
  async signIn(username, password) {
    return (await call("POST", "/auth/login", { username, password })).user;
  },
  async signOut() {
    await call("POST", "/auth/logout", {});
  },
  // The signed-in user ({ id, username, createdAt }), or null.
  async me() {
    return (await call("GET", "/auth/me")).user;
  },
};

export default { data, auth, DataError };
