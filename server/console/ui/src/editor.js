// The editor chunk, loaded on first use: CodeMirror 6 with the languages a
// config can have, validation of JSON/YAML/XML, and the diff view.
import { EditorState, Compartment } from '@codemirror/state';
import { EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter, drawSelection, highlightSpecialChars } from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { syntaxHighlighting, defaultHighlightStyle, StreamLanguage, bracketMatching, foldGutter, foldKeymap, indentOnInput } from '@codemirror/language';
import { searchKeymap, highlightSelectionMatches } from '@codemirror/search';
import { linter, lintGutter } from '@codemirror/lint';
import { json } from '@codemirror/lang-json';
import { xml } from '@codemirror/lang-xml';
import { yaml } from '@codemirror/lang-yaml';
import { html } from '@codemirror/lang-html';
import { properties } from '@codemirror/legacy-modes/mode/properties';
import { MergeView } from '@codemirror/merge';
import { parseDocument } from 'yaml';

function language(type) {
  switch (type) {
    case 'json': return json();
    case 'xml': return xml();
    case 'yaml': return yaml();
    case 'html': return html();
    case 'properties': return StreamLanguage.define(properties);
    default: return [];
  }
}

// lineOf converts an offset into a 1-based line number.
function lineOf(text, offset) {
  return text.slice(0, Math.max(0, offset)).split('\n').length;
}

// validate checks JSON, YAML and XML syntax. It returns null when the text
// is valid (or of a type without a check) or {message, line, from, to}.
export function validate(type, text) {
  if (type === 'json') {
    try {
      JSON.parse(text);
      return null;
    } catch (e) {
      const m = /position (\d+)/.exec(e.message);
      const pos = m ? +m[1] : 0;
      const lm = /line (\d+)/.exec(e.message);
      return { message: 'JSON: ' + e.message, line: lm ? +lm[1] : lineOf(text, pos), from: pos, to: Math.min(text.length, pos + 1) };
    }
  }
  if (type === 'yaml') {
    const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
    if (!doc.errors.length) return null;
    const e = doc.errors[0];
    const from = e.pos ? e.pos[0] : 0;
    return { message: 'YAML: ' + e.message.split('\n')[0], line: lineOf(text, from), from, to: e.pos ? e.pos[1] : from };
  }
  if (type === 'xml') {
    const d = new DOMParser().parseFromString(text, 'application/xml');
    const err = d.getElementsByTagName('parsererror')[0];
    if (!err) return null;
    const msg = (err.textContent || 'not well-formed').replace(/\s+/g, ' ').trim();
    const lm = /line (\d+)/.exec(msg);
    return { message: 'XML: ' + msg.replace(/^This page contains the following errors:\s*/, '').replace(/Below is a rendering.*$/, ''), line: lm ? +lm[1] : 1 };
  }
  return null;
}

const lintFor = (getType) => linter((view) => {
  const text = view.state.doc.toString();
  const err = validate(getType(), text);
  if (!err) return [];
  let from = err.from;
  let to = err.to;
  if (from === undefined) {
    const line = view.state.doc.line(Math.min(Math.max(err.line || 1, 1), view.state.doc.lines));
    from = line.from;
    to = line.to;
  }
  from = Math.min(from, text.length);
  return [{ from, to: Math.max(from, Math.min(to, text.length)), severity: 'error', message: err.message }];
}, { delay: 300 });

const theme = EditorView.theme({
  '&': { fontSize: '13px', border: '1px solid var(--line)', borderRadius: '6px', background: 'var(--bg)' },
  '.cm-scroller': { fontFamily: 'var(--mono)', minHeight: '16rem', maxHeight: '60vh' },
  '&.cm-focused': { outline: '2px solid var(--focus)' },
});

function baseExtensions() {
  return [
    lineNumbers(), highlightActiveLineGutter(), highlightSpecialChars(), history(), foldGutter(), drawSelection(),
    indentOnInput(), bracketMatching(), highlightActiveLine(), highlightSelectionMatches(),
    syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
    keymap.of([...defaultKeymap, ...historyKeymap, ...searchKeymap, ...foldKeymap, indentWithTab]),
    theme,
  ];
}

// createEditor mounts an editor in parent. It returns {getValue, setValue,
// setType, focus, destroy}.
export function createEditor(parent, { doc = '', type = 'text', readOnly = false, onChange, label = 'Content' }) {
  let current = type;
  const lang = new Compartment();
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        baseExtensions(),
        lang.of(language(type)),
        lintGutter(),
        lintFor(() => current),
        EditorState.readOnly.of(readOnly),
        EditorView.editable.of(!readOnly),
        EditorView.contentAttributes.of({ 'aria-label': label }),
        EditorView.updateListener.of((u) => { if (u.docChanged && onChange) onChange(u.state.doc.toString()); }),
      ],
    }),
  });
  return {
    getValue: () => view.state.doc.toString(),
    setValue: (v) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: v } }),
    setType: (t) => { current = t; view.dispatch({ effects: lang.reconfigure(language(t)) }); },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}

// createDiff shows original (left) against modified (right), read-only,
// with changed lines and characters marked. It returns {destroy, changes}
// where changes is the number of changed chunks.
export function createDiff(parent, { original = '', modified = '', type = 'text' }) {
  const ext = [
    lineNumbers(), highlightSpecialChars(), drawSelection(),
    syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
    language(type), theme, EditorState.readOnly.of(true), EditorView.editable.of(false),
  ];
  const mv = new MergeView({
    a: { doc: original, extensions: [...ext, EditorView.contentAttributes.of({ 'aria-label': 'Current content' })] },
    b: { doc: modified, extensions: [...ext, EditorView.contentAttributes.of({ 'aria-label': 'New content' })] },
    parent,
    highlightChanges: true,
    gutter: true,
    collapseUnchanged: { margin: 3, minSize: 8 },
  });
  return { destroy: () => mv.destroy(), changes: mv.chunks.length };
}
