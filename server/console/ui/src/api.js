// HTTP access to nacosd's API. Every call carries the login token the way
// the Java console sends it: localStorage "token" holds the login JSON and
// its accessToken goes in the query string.

export class ApiError extends Error {
  constructor(status, message) {
    super(message || `HTTP ${status}`);
    this.status = status;
  }
}

// Messages of the 403 that mean "log in again" (AuthFilter/NacosAuthManager).
const loginMessages = ['unknown user!', 'token invalid!', 'token expired!', 'user not found!'];

let onLoginNeeded = () => {};
export function setLoginHandler(fn) { onLoginNeeded = fn; }

export function session() {
  try {
    return JSON.parse(localStorage.getItem('token') || 'null');
  } catch {
    return null;
  }
}

export function accessToken() {
  const s = session();
  return (s && s.accessToken) || '';
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) v.forEach((x) => q.append(k, x));
    else q.append(k, String(v));
  }
  const t = accessToken();
  if (t) q.set('accessToken', t);
  return q.toString();
}

// url builds a same-origin API URL (relative to the page, so any context path works).
export function url(path, params) {
  const q = query(params);
  return path + (q ? '?' + q : '');
}

// errorText extracts the message of an error body: Spring's /error JSON
// ("message"), a RestResult ("message"), or the plain "caused: ...;" text.
function errorText(text) {
  try {
    const j = JSON.parse(text);
    if (j && typeof j === 'object' && j.message) return String(j.message);
  } catch { /* not JSON */ }
  // a NacosException chain "caused: outer;caused: inner;": the outer message
  const t = text.trim();
  const m = /^caused: (.*?);(caused: |$)/s.exec(t);
  return m ? m[1] : t;
}

// request performs one API call. opts: query, form (object → urlencoded
// body), json (→ JSON body), body (FormData...), headers, blob.
export async function request(method, path, opts = {}) {
  const headers = { ...(opts.headers || {}) };
  // Config writes record their operator from the username parameter (as
  // on Java Nacos 1.4.8, whose history shows srcUser only when it is sent):
  // send the logged-in user, so history and detail say who changed what.
  const s = session();
  if (method !== 'GET' && path === 'v1/cs/configs' && s && s.username) {
    const q = opts.query || {};
    const key = q.import === 'true' || q.clone === 'true' ? 'src_user' : 'username'; // as each 1.x endpoint reads it
    opts = { ...opts, query: { [key]: s.username, ...q } };
  }
  let body;
  if (opts.form) {
    const f = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.form)) if (v !== undefined && v !== null) f.append(k, String(v));
    body = f;
  } else if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['Content-Type'] = 'application/json';
  } else if (opts.body) {
    body = opts.body;
  }
  let res;
  try {
    res = await fetch(url(path, opts.query), { method, headers, body, cache: 'no-store' });
  } catch (e) {
    throw new ApiError(0, `Cannot reach the server (${e.message})`);
  }
  if (opts.blob && res.ok) return res.blob();
  const text = await res.text();
  if (!res.ok) {
    const msg = errorText(text) || `${res.status} ${res.statusText}`;
    if ((res.status === 403 || res.status === 401) && loginMessages.includes(msg)) onLoginNeeded(msg);
    throw new ApiError(res.status, msg);
  }
  const ct = res.headers.get('Content-Type') || '';
  if (ct.includes('json') && text !== '') {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

export const get = (path, q, o) => request('GET', path, { ...o, query: q });
export const post = (path, form, o) => request('POST', path, { ...o, form });
export const put = (path, form, o) => request('PUT', path, { ...o, form });
export const del = (path, q, o) => request('DELETE', path, { ...o, query: q });
export const patch = (path, form, o) => request('PATCH', path, { ...o, form });

// restData unwraps a RestResult, throwing on a code other than 200.
export function restData(r) {
  if (r && typeof r === 'object' && 'code' in r) {
    if (r.code !== 200 && r.code !== 0) throw new ApiError(r.code, r.message || `code ${r.code}`);
    return r.data;
  }
  return r;
}
