// Hash routing: #/path?query. Pages read the query and navigate with go().
//
// Every link carries the namespace as the Java console's do (&namespace=,
// empty for public), so a link sent to a colleague opens in the namespace
// it was copied from; App reads it back (namespace= or tenant=).
import { useEffect, useState } from 'preact/hooks';
import { getState } from './store.js';

// parseHash reads the route; hash is the location.hash it was read from.
export function parseHash() {
  const h = location.hash.replace(/^#/, '') || '/';
  const i = h.indexOf('?');
  const path = i < 0 ? h : h.slice(0, i);
  const q = Object.fromEntries(new URLSearchParams(i < 0 ? '' : h.slice(i + 1)));
  return { path, q, hash: location.hash };
}

// pages that do not belong to a namespace: their links carry none
const global = new Set(['/login', '/namespaces', '/cluster', '/users', '/roles', '/permissions']);
export const isGlobal = (path) => global.has(path);

export function href(path, q) {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(q || {})) {
    if (k !== 'namespace' && v !== undefined && v !== null && v !== '') s.set(k, v);
  }
  if (!global.has(path)) {
    const ns = q && q.namespace !== undefined && q.namespace !== null ? q.namespace : getState().namespace;
    s.set('namespace', ns || ''); // kept when empty: public, not "whatever the reader has"
  }
  const qs = s.toString();
  return '#' + path + (qs ? '?' + qs : '');
}

export function go(path, q) {
  location.hash = href(path, q);
}

// replace updates the route without adding a history entry (paging, search).
export function replace(path, q) {
  history.replaceState(null, '', href(path, q));
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

export function useRoute() {
  const [r, setR] = useState(parseHash());
  useEffect(() => {
    const f = () => setR(parseHash());
    window.addEventListener('hashchange', f);
    f(); // a navigation before the listener existed (during the first render) is not missed
    return () => window.removeEventListener('hashchange', f);
  }, []);
  return r;
}
