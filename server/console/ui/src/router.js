// Hash routing: #/path?query. Pages read the query and navigate with go().
import { useEffect, useState } from 'preact/hooks';

export function parseHash() {
  const h = location.hash.replace(/^#/, '') || '/';
  const i = h.indexOf('?');
  const path = i < 0 ? h : h.slice(0, i);
  const q = Object.fromEntries(new URLSearchParams(i < 0 ? '' : h.slice(i + 1)));
  return { path, q };
}

export function href(path, q) {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(q || {})) if (v !== undefined && v !== null && v !== '') s.set(k, v);
  const qs = s.toString();
  return '#' + path + (qs ? '?' + qs : '');
}

export function go(path, q) {
  location.hash = href(path, q);
}

// replace updates the query without adding a history entry (paging, search).
export function replace(path, q) {
  history.replaceState(null, '', href(path, q));
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

export function useRoute() {
  const [r, setR] = useState(parseHash());
  useEffect(() => {
    const f = () => setR(parseHash());
    window.addEventListener('hashchange', f);
    return () => window.removeEventListener('hashchange', f);
  }, []);
  return r;
}
