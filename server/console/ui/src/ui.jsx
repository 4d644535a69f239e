// Shared widgets: data loading, messages, dialogs, tables, paging.
import { render } from 'preact';
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

// useLoad runs fn when deps change; reload() runs it again. The previous
// data stays visible while reloading (no flicker on live refresh). The
// request starts as soon as the page is in the DOM, not after a paint.
export function useLoad(fn, deps) {
  const [st, setSt] = useState({ data: undefined, error: null, loading: true });
  const seq = useRef(0);
  const run = useCallback(() => {
    const n = ++seq.current;
    setSt((s) => ({ ...s, loading: true }));
    Promise.resolve()
      .then(fn)
      .then(
        (data) => n === seq.current && setSt({ data, error: null, loading: false }),
        (error) => n === seq.current && setSt((s) => ({ data: s.data, error, loading: false })),
      );
  }, deps);
  useLayoutEffect(run, [run]);
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
