// Shared widgets: data loading, messages, dialogs, tables, paging.
import { Component, render } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

// afterFirstData runs fn once the page has shown its first data (or after
// maxWait ms): work the first screen does not need (the namespace list, the
// live stream) then does not compete with it for the main thread.
let firstData = false;
const waiting = [];
export function afterFirstData(fn, maxWait = 300) {
  if (firstData) return fn();
  let done = false;
  const run = () => { if (!done) { done = true; fn(); } };
  waiting.push(run);
  setTimeout(run, maxWait);
}
function dataShown() {
  if (firstData) return;
  firstData = true;
  // after the render of the data (Preact renders in a microtask)
  Promise.resolve().then(() => waiting.splice(0).forEach((f) => f()));
}

// useLoad runs fn when deps change; reload() runs it again and returns a
// promise that settles once the new data is set. The previous data stays
// visible while reloading (no flicker on live refresh). The request starts
// as soon as the page is in the DOM, not after a paint.
export function useLoad(fn, deps) {
  const [st, setSt] = useState({ data: undefined, error: null, loading: true });
  const seq = useRef(0);
  const run = useCallback(() => {
    const n = ++seq.current;
    setSt((s) => ({ ...s, loading: true }));
    return Promise.resolve()
      .then(fn)
      .then(
        (data) => { if (n === seq.current) setSt({ data, error: null, loading: false }); dataShown(); },
        (error) => { if (n === seq.current) setSt((s) => ({ data: s.data, error, loading: false })); dataShown(); },
      );
  }, deps);
  useLayoutEffect(() => { run(); }, [run]);
  return { ...st, reload: run };
}

// ---- messages (toasts), announced to screen readers
let pushToast = () => {};
export function toast(text, kind = 'ok') { pushToast({ text: String(text), kind, id: Math.random() }); }
export function toastError(e) { toast(e && e.message ? e.message : String(e), 'error'); }

export function Toasts() {
  const [items, setItems] = useState([]);
  useEffect(() => {
    pushToast = (t) => {
      setItems((l) => [...l, t]);
      setTimeout(() => setItems((l) => l.filter((x) => x.id !== t.id)), t.kind === 'error' ? 9000 : 4000);
    };
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {items.map((t) => (
        <div key={t.id} class={'toast ' + t.kind} onClick={() => setItems((l) => l.filter((x) => x.id !== t.id))}>{t.text}</div>
      ))}
    </div>
  );
}

export function ErrorBox({ error, retry }) {
  if (!error) return null;
  return (
    <div class="alert error" role="alert">
      <strong>{error.status ? `Error ${error.status}: ` : 'Error: '}</strong>{error.message || String(error)}
      {retry && <button class="link" onClick={retry}>Retry</button>}
    </div>
  );
}

// Dialog is a modal <dialog>: the browser traps focus and Esc closes it.
export function Dialog({ title, onClose, children, wide, footer }) {
  const ref = useRef();
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    const onCancel = (e) => { e.preventDefault(); onClose && onClose(); };
    d.addEventListener('cancel', onCancel);
    return () => d.removeEventListener('cancel', onCancel);
  }, []);
  return (
    <dialog ref={ref} class={wide ? 'wide' : ''} aria-label={title}>
      <header>
        <h2>{title}</h2>
        <button class="icon" aria-label="Close" onClick={onClose}>×</button>
      </header>
      <div class="body">{children}</div>
      {footer && <footer>{footer}</footer>}
    </dialog>
  );
}

// confirm shows a modal question and resolves true/false.
export function confirm(message, { okText = 'OK', danger = false, title = 'Please confirm' } = {}) {
  return new Promise((resolve) => {
    const host = document.createElement('div');
    document.body.appendChild(host);
    const done = (v) => { render(null, host); host.remove(); resolve(v); };
    render(
      <Dialog title={title} onClose={() => done(false)} footer={<>
        <button onClick={() => done(false)}>Cancel</button>
        <button class={danger ? 'danger' : 'primary'} autofocus onClick={() => done(true)}>{okText}</button>
      </>}>
        <p class="pre">{message}</p>
      </Dialog>,
      host,
    );
  });
}

export function Pager({ pageNo, pageSize, total, onPage, sizes = [10, 20, 50, 100] }) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  return (
    <nav class="pager" aria-label="Pages">
      <span class="muted">{total} total</span>
      <button disabled={pageNo <= 1} onClick={() => onPage(1, pageSize)} aria-label="First page">«</button>
      <button disabled={pageNo <= 1} onClick={() => onPage(pageNo - 1, pageSize)} aria-label="Previous page">‹</button>
      <span class="pageinfo">Page {Math.min(pageNo, pages)} of {pages}</span>
      <button disabled={pageNo >= pages} onClick={() => onPage(pageNo + 1, pageSize)} aria-label="Next page">›</button>
      <button disabled={pageNo >= pages} onClick={() => onPage(pages, pageSize)} aria-label="Last page">»</button>
      <label>
        <span class="sr">Page size</span>
        <select value={pageSize} onChange={(e) => onPage(1, +e.target.value)}>
          {sizes.map((s) => <option value={s}>{s} / page</option>)}
        </select>
      </label>
    </nav>
  );
}

// Field is a labelled form control.
export function Field({ label, hint, children, error }) {
  return (
    <label class="field">
      <span class="label">{label}</span>
      {children}
      {hint && <span class="hint">{hint}</span>}
      {error && <span class="field-error">{error}</span>}
    </label>
  );
}

export function Empty({ children }) {
  return <p class="empty">{children}</p>;
}

export function fmtTime(v) {
  if (v === null || v === undefined || v === '') return '';
  const d = typeof v === 'number' ? new Date(v) : new Date(v);
  if (isNaN(d)) return String(v);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

// busy wraps an async action: disables re-entry, shows errors as messages.
export function useBusy() {
  const [busy, setBusy] = useState(false);
  const run = async (fn) => {
    if (busy) return;
    setBusy(true);
    try {
      return await fn();
    } catch (e) {
      toastError(e);
    } finally {
      setBusy(false);
    }
  };
  return [busy, run];
}

export function Badge({ kind, children }) {
  return <span class={'badge ' + (kind || '')}>{children}</span>;
}

export function PageHead({ title, children }) {
  useEffect(() => { document.title = `${title} · nacosd`; }, [title]);
  return (
    <div class="pagehead">
      <h1>{title}</h1>
      <div class="actions">{children}</div>
    </div>
  );
}

// Metadata editor as "key=value" lines, converted to and from objects.
export const metaToText = (m) => Object.entries(m || {}).map(([k, v]) => `${k}=${v}`).join('\n');
export function textToMeta(t) {
  const out = {};
  for (const raw of t.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const i = line.indexOf('=');
    if (i <= 0) throw new Error(`metadata line "${line}" is not key=value`);
    out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

// Catch shows a page that threw while rendering as a message (with the
// error) instead of a blank screen; the rest of the console keeps working.
export class Catch extends Component {
  componentDidCatch(error) {
    this.setState({ error });
  }

  render({ children }, { error }) {
    if (!error) return children;
    return (
      <div class="alert error" role="alert">
        <p><strong>This page failed:</strong> {error.message || String(error)}</p>
        <p><button onClick={() => this.setState({ error: null })}>Try again</button> <a href="#/configs">Go to configs</a></p>
      </div>
    );
  }
}

// ---- keyboard
const typing = (el) => el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));

export const shortcuts = [
  ['/', 'Focus the first search field of the page'],
  ['Ctrl+S / ⌘S', 'In the config editor: review the diff and publish (Enter confirms)'],
  ['Esc', 'Close a dialog'],
  ['Tab / Shift+Tab', 'Move between links, fields and buttons; Enter or Space activates'],
  ['?', 'Show these keys'],
];

// installKeys adds the console's few shortcuts (see shortcuts).
export function installKeys() {
  document.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 's') {
      const b = document.querySelector('#publish');
      if (b && !document.querySelector('dialog[open]')) {
        e.preventDefault();
        b.click();
      }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target) || document.querySelector('dialog[open]')) return;
    if (e.key === '/') {
      const f = document.querySelector('main form[role=search] input:not([type=checkbox])');
      if (f) {
        e.preventDefault();
        f.focus();
        f.select();
      }
    } else if (e.key === '?') {
      e.preventDefault();
      showKeys();
    }
  });
}

function showKeys() {
  const host = document.createElement('div');
  document.body.appendChild(host);
  const done = () => { render(null, host); host.remove(); };
  render(
    <Dialog title="Keyboard" onClose={done} footer={<button class="primary" autofocus onClick={done}>Close</button>}>
      <dl class="props keys">{shortcuts.map(([k, v]) => <><dt><kbd>{k}</kbd></dt><dd>{v}</dd></>)}</dl>
    </Dialog>,
    host,
  );
}

// ---- narrow screens
// labelTables gives every cell of a table.grid under root the text of its
// column head as data-label, so that on a phone width the stylesheet can
// show each row as a card of "label value" lines instead of a table wider
// than the screen.
export function labelTables(root) {
  let queued = false;
  const pass = () => {
    queued = false;
    for (const t of root.querySelectorAll('table.grid')) {
      const heads = [...t.querySelectorAll('thead th')].map((th) => th.textContent.trim() || (th.querySelector('input') ? 'Select' : ''));
      if (!heads.length) continue;
      for (const tr of t.tBodies.length ? t.tBodies[0].rows : []) {
        [...tr.cells].forEach((td, i) => {
          if (td.dataset.label !== heads[i]) td.dataset.label = heads[i] || '';
        });
      }
    }
  };
  new MutationObserver(() => {
    if (!queued) {
      queued = true;
      requestAnimationFrame(pass);
    }
  }).observe(root, { childList: true, subtree: true });
}
