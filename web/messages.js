// Errors as sentences about what the person did (issue 38): never a field name of the API.
// The API's error code picks the sentence; a validation error's `fields` and a lockout's
// `lockout` (docs/api.md, "Errors") are worded here in the chosen language, with the time a
// lockout ends in the person's own time zone. The forms also check what they can before
// sending (`blank`), with the same sentences.

import { lang, t } from "./i18n.js";

export class ApiError extends Error {
  // `detail`: the error body's optional fields beside code and message.
  constructor(status, code, message, retryAfter, detail = {}) {
    super(message);
    this.status = status; this.code = code; this.retryAfter = retryAfter;
    this.lockout = detail.lockout || null;
    this.fields = Array.isArray(detail.fields) ? detail.fields : [];
  }
}

const TEXT = {
  en: {
    "blank.initPrompt": "Describe the app you want before creating it.",
    "blank.name": "An app needs a name: type one before saving.",
    "blank.message": "Type a message before sending it.",
    "blank.account": "Type your account name.",
    "blank.password": "Type your password.",
    "short.account": "An account name needs at least {limit} characters.",
    "short.password": "A password needs at least {limit} characters.",
    "long.initPrompt": "The description is too long: at most {limit} characters.",
    "long.name": "The name is too long: at most {limit} characters.",
    "long.message": "The message is too long: at most {limit} characters.",
    "long.account": "The account name is too long: at most {limit} characters.",
    "long.password": "The password is too long: at most {limit} characters.",
    "bad.account": "An account name may hold letters, digits, “.”, “_” and “-” only.",
    "bad.codeGenType": "Choose one of the kinds of app in the list.",
    "bad.other": "Something in the form was not accepted: check what you typed and try again.",
    "locked.wrong_passwords": "This account is locked after {after} wrong passwords; try again at {time} (in {wait}).",
    "locked.attempts_from_address": "Signing in from this network is paused after {after} attempts; try again at {time} (in {wait}).",
    "rate": "That was too many requests in a short time: try again in {wait}.",
    "seconds": "{n} seconds", "second": "1 second", "minutes": "{n} minutes", "minute": "1 minute",
    "word.initPrompt": "your description", "word.message": "your message", "word.name": "the name",
    "word.element": "the picked element",
  },
  "zh-CN": {
    "blank.initPrompt": "请先描述你想要的应用，再创建。",
    "blank.name": "应用需要一个名称：请先输入再保存。",
    "blank.message": "请先输入消息再发送。",
    "blank.account": "请输入账号名。",
    "blank.password": "请输入密码。",
    "short.account": "账号名至少需要 {limit} 个字符。",
    "short.password": "密码至少需要 {limit} 个字符。",
    "long.initPrompt": "描述太长：最多 {limit} 个字符。",
    "long.name": "名称太长：最多 {limit} 个字符。",
    "long.message": "消息太长：最多 {limit} 个字符。",
    "long.account": "账号名太长：最多 {limit} 个字符。",
    "long.password": "密码太长：最多 {limit} 个字符。",
    "bad.account": "账号名只能包含字母、数字、“.”、“_”和“-”。",
    "bad.codeGenType": "请从列表中选择一种应用类型。",
    "bad.other": "表单中有内容未被接受：请检查输入后重试。",
    "locked.wrong_passwords": "该账号因 {after} 次密码错误已被锁定；请在 {time}（{wait}后）重试。",
    "locked.attempts_from_address": "此网络的登录已因 {after} 次尝试而暂停；请在 {time}（{wait}后）重试。",
    "rate": "短时间内请求过多：请在 {wait}后重试。",
    "seconds": "{n} 秒", "second": "1 秒", "minutes": "{n} 分钟", "minute": "1 分钟",
    "word.initPrompt": "你的描述", "word.message": "你的消息", "word.name": "名称", "word.element": "选取的元素",
  },
};

function say(key, vars = {}) {
  const text = (TEXT[lang()] || TEXT.en)[key] ?? TEXT.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => String(vars[name] ?? ""));
}

// "15 minutes", "40 seconds": how long a wait is (seconds rounded up, minutes to the nearest).
function wait(seconds) {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 90) return s === 1 ? say("second") : say("seconds", { n: s });
  const m = Math.round(s / 60);
  return m === 1 ? say("minute") : say("minutes", { n: m });
}

// The sentence for a field left blank, or null when the form has none for it.
export function blank(field) {
  return TEXT.en[`blank.${field}`] ? say(`blank.${field}`) : null;
}

// One problem of a validation error (`{field, type, limit}`) as a sentence about the form.
function fieldSentence({ field = "", type = "", limit }) {
  const name = String(field).split(".")[0];
  const empty = type === "missing" || type === "string_blank" ||
    (type === "string_too_short" && Number(limit) <= 1);
  if (empty && TEXT.en[`blank.${name}`]) return say(`blank.${name}`);
  if (type === "string_too_short" && TEXT.en[`short.${name}`]) return say(`short.${name}`, { limit });
  if (type === "string_too_long" && TEXT.en[`long.${name}`]) return say(`long.${name}`, { limit });
  if (TEXT.en[`bad.${name}`]) return say(`bad.${name}`);
  return say("bad.other");
}

function lockoutText(lockout, retryAfter) {
  const until = new Date(lockout.until);
  const left = Number.isNaN(until.getTime()) ? retryAfter || 60 : (until.getTime() - Date.now()) / 1000;
  const time = Number.isNaN(until.getTime()) ? "—"
    : until.toLocaleTimeString(lang(), { hour: "2-digit", minute: "2-digit" });
  const key = TEXT.en[`locked.${lockout.reason}`] ? `locked.${lockout.reason}` : "locked.wrong_passwords";
  return say(key, { after: lockout.after, time, wait: wait(left) });
}

// What a person should read for an error: by the API's error code first (a 409 may be a
// running turn or a taken account name), then by the status.
const BY_CODE = {
  account_taken: (err) => t("err.account_taken", { message: err.message }),
  invalid_credentials: () => t("err.invalid_credentials"),
  rate_limited: (err) => (err.lockout ? lockoutText(err.lockout, err.retryAfter)
    : say("rate", { wait: wait(err.retryAfter || 60) })),
  validation_error: (err) => [...new Set(err.fields.map(fieldSentence))].join(" ") || say("bad.other"),
  busy: (err) => t("err.busy", { message: err.message }),
  unavailable: (err) => t("err.unavailable", { message: err.message }),
  storage_unavailable: (err) => t("err.storage_unavailable", { message: err.message }),
  preview_out_of_date: () => t("err.preview_out_of_date"),
  checks_failed: (err) => t("err.checks_failed", { message: err.message }),
};

// A refusal's message with the API's field name it starts with said as people say it
// ("initPrompt looks like…" is "your description looks like…").
function plain(message) {
  return String(message).replace(/^(initPrompt|message|name|element)(\.\w+)?\b/,
    (_, field) => say(`word.${field}`));
}

export function explain(err) {
  if (!(err instanceof ApiError)) return t("err.network", { message: err.message });
  if (BY_CODE[err.code]) return BY_CODE[err.code](err);
  const message = err.message;
  if (err.status === 429) return BY_CODE.rate_limited(err);
  if (err.status === 409) return t("err.busy", { message });
  if (err.status === 413) return t("err.too_large", { message });
  if (err.status === 401) return t("err.unauthenticated");
  if (err.status === 403) return t("err.forbidden", { message });
  if (err.status === 404) return t("err.not_found");
  if (err.status === 422) return say("bad.other");
  if (err.status === 400) return t("err.invalid", { message: plain(message) });
  if (err.status === 503) return t("err.unavailable", { message });
  return t("err.other", { status: err.status, message });
}
