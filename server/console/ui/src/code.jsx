// Preact wrappers around the lazily loaded editor chunk.
import { useEffect, useRef, useState } from 'preact/hooks';

let chunk;
export function loadEditor() {
  if (!chunk) chunk = import('./editor.js');
  return chunk;
}

export const configTypes = ['text', 'json', 'xml', 'yaml', 'html', 'properties'];

// CodeEditor: value is only read at mount; use the ref's getValue/setValue.
export function CodeEditor({ value, type, readOnly, onChange, editorRef, label }) {
  const host = useRef();
  const ed = useRef();
  const [err, setErr] = useState(null);
  useEffect(() => {
    let alive = true;
    loadEditor().then((m) => {
      if (!alive) return;
      ed.current = m.createEditor(host.current, { doc: value || '', type, readOnly, onChange, label });
      if (editorRef) editorRef.current = ed.current;
    }, setErr);
    return () => { alive = false; ed.current && ed.current.destroy(); };
  }, []);
  useEffect(() => { ed.current && ed.current.setType(type); }, [type]);
  return (
    <div class="editor" data-testid="editor">
      {err && <p class="alert error">The editor failed to load: {err.message}</p>}
      <div ref={host} />
    </div>
  );
}

export function DiffView({ original, modified, type }) {
  const host = useRef();
  const [changes, setChanges] = useState(null);
  useEffect(() => {
    let d;
    let alive = true;
    loadEditor().then((m) => {
      if (!alive) return;
      d = m.createDiff(host.current, { original, modified, type });
      setChanges(d.changes);
    });
    return () => { alive = false; d && d.destroy(); };
  }, [original, modified, type]);
  return (
    <div class="diff" data-testid="diff">
      <div class="diffhead"><span>Current</span><span>New</span></div>
      {changes === 0 && <p class="alert info">No changes: the new content is identical to the current one.</p>}
      <div ref={host} />
    </div>
  );
}

export async function validateContent(type, text) {
  const m = await loadEditor();
  return m.validate(type, text);
}
