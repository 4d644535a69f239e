// Configs: search, paging, selection and the batch actions (export, import,
// clone, delete).
import { useState } from 'preact/hooks';
import { del, get, request, restData, url } from '../api.js';
import { go, href, replace } from '../router.js';
import { getState } from '../store.js';
import { Dialog, Empty, ErrorBox, Field, PageHead, Pager, confirm, fmtTime, toast, toastError, useBusy, useLoad } from '../ui.jsx';

// pattern turns a fuzzy search term into the 1.x LIKE pattern (*term*).
const pattern = (s) => (!s ? '' : s.includes('*') ? s : `*${s}*`);

// searchConfigs lists configs through nacosd's console search (the 1.x
// search plus a content filter, and type, MD5 and modification time in every
// row); a server without it (404) gets the 1.x search, without content.
export async function searchConfigs(ns, q) {
  const pageNo = +q.pageNo || 1;
  const pageSize = +q.pageSize || 20;
  const exact = q.mode === 'exact';
  const p = {
    tenant: ns, appName: q.appName || '', config_tags: q.tags || '', pageNo, pageSize,
    search: exact ? 'accurate' : 'blur',
    dataId: exact ? q.dataId || '' : pattern(q.dataId),
    group: exact ? q.group || '' : pattern(q.group),
  };
  try {
    return await get('v1/console/configs', { ...p, content: q.content || '' });
  } catch (e) {
    if (e.status !== 404 || q.content) throw e;
    return get('v1/cs/configs', p);
  }
}

export function Configs({ q, ns }) {
  const [form, setForm] = useState({ dataId: q.dataId || '', group: q.group || '', appName: q.appName || '', tags: q.tags || '', content: q.content || '', mode: q.mode || 'fuzzy' });
  const [selected, setSelected] = useState(new Map());
  const [dialog, setDialog] = useState(null);
  const [busy, run] = useBusy();
  const page = useLoad(() => searchConfigs(ns, q), [ns, JSON.stringify(q)]);
  const items = (page.data && page.data.pageItems) || [];

  const search = (e) => {
    e && e.preventDefault();
    setSelected(new Map());
    replace('/configs', { ...form, mode: form.mode === 'fuzzy' ? '' : form.mode, pageSize: q.pageSize });
  };
  const set = (k) => (e) => setForm({ ...form, [k]: e.target.value });
  const toggle = (c) => {
    const m = new Map(selected);
    m.has(c.id) ? m.delete(c.id) : m.set(c.id, c);
    setSelected(m);
  };
  const allOnPage = items.length > 0 && items.every((c) => selected.has(c.id));
  const toggleAll = () => {
    const m = new Map(selected);
    items.forEach((c) => (allOnPage ? m.delete(c.id) : m.set(c.id, c)));
    setSelected(m);
  };

  const remove = (c) => run(async () => {
    if (!(await confirm(`Delete config ${c.dataId} (group ${c.group})?\nClients listening to it will see it disappear.`, { okText: 'Delete', danger: true }))) return;
    await del('v1/cs/configs', { dataId: c.dataId, group: c.group, tenant: ns });
    toast(`Deleted ${c.dataId}`);
    page.reload();
  });
  const removeSelected = () => run(async () => {
    const list = [...selected.values()];
    if (!(await confirm(`Delete ${list.length} configs?\n${list.map((c) => `${c.group} / ${c.dataId}`).join('\n')}`, { okText: 'Delete all', danger: true }))) return;
    restData(await del('v1/cs/configs', { delType: 'ids', ids: list.map((c) => c.id).join(',') }));
    toast(`Deleted ${list.length} configs`);
    setSelected(new Map());
    page.reload();
  });
  const exportUrl = (v2, ids) => url('v1/cs/configs', {
    [v2 ? 'exportV2' : 'export']: 'true', tenant: ns, ids: ids ? ids.join(',') : '',
    ...(ids ? {} : { dataId: q.dataId ? pattern(q.dataId) : '', group: q.mode === 'exact' ? q.group || '' : '', appName: q.appName || '' }),
  });

  return (
    <section>
      <PageHead title="Configs">
        <button class="primary" onClick={() => go('/configs/edit', { new: '1' })}>New config</button>
        <button onClick={() => setDialog('import')}>Import</button>
        <a class="button" href={exportUrl(true)} download>Export all matching</a>
      </PageHead>
      <form class="searchbar" onSubmit={search} role="search">
        <Field label="Data ID"><input name="dataId" value={form.dataId} onInput={set('dataId')} placeholder="any" /></Field>
        <Field label="Group"><input name="group" value={form.group} onInput={set('group')} placeholder="any" /></Field>
        <Field label="App"><input name="appName" value={form.appName} onInput={set('appName')} placeholder="any (exact)" /></Field>
        <Field label="Tags"><input name="tags" value={form.tags} onInput={set('tags')} placeholder="t1,t2" /></Field>
        <Field label="Content contains"><input name="content" value={form.content} onInput={set('content')} placeholder="text" /></Field>
        <Field label="Match">
          <select name="mode" value={form.mode} onChange={set('mode')}>
            <option value="fuzzy">fuzzy (contains, * wildcard)</option>
            <option value="exact">exact</option>
          </select>
        </Field>
        <button class="primary" type="submit">Search</button>
      </form>
      <ErrorBox error={page.error} retry={page.reload} />
      {selected.size > 0 && (
        <div class="selbar" role="region" aria-label="Selection">
          <span>{selected.size} selected</span>
          <a class="button" href={exportUrl(true, [...selected.keys()])} download>Export</a>
          <a class="button" href={exportUrl(false, [...selected.keys()])} download>Export (v1 zip)</a>
          <button onClick={() => setDialog('clone')}>Clone to namespace…</button>
          <button class="danger" disabled={busy} onClick={removeSelected}>Delete</button>
          <button class="link" onClick={() => setSelected(new Map())}>Clear</button>
        </div>
      )}
      <div class="tablewrap">
        <table class="grid" aria-busy={page.loading}>
          <thead>
            <tr>
              <th class="check"><input type="checkbox" aria-label="Select all on this page" checked={allOnPage} onChange={toggleAll} /></th>
              <th>Data ID</th><th>Group</th><th>App</th><th>Format</th><th>Last modified</th><th class="actions">Actions</th>
            </tr>
          </thead>
          <tbody>
            {items.map((c) => {
              const key = { dataId: c.dataId, group: c.group };
              return (
                <tr key={c.id}>
                  <td class="check"><input type="checkbox" aria-label={`Select ${c.dataId}`} checked={selected.has(c.id)} onChange={() => toggle(c)} /></td>
                  <td><a href={href('/configs/detail', key)}>{c.dataId}</a></td>
                  <td>{c.group}</td>
                  <td>{c.appName}</td>
                  <td>{c.type || ''}</td>
                  <td>{fmtTime(c.modifyTime)}</td>
                  <td class="actions">
                    <a href={href('/configs/edit', key)}>Edit</a>
                    <a href={href('/history', key)}>History</a>
                    <a href={href('/listeners', { ...key, by: 'config' })}>Listeners</a>
                    <button class="link danger" onClick={() => remove(c)}>Delete</button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {page.data && !items.length && <Empty>No configs match. {!q.dataId && !q.group ? 'Create one with "New config".' : ''}</Empty>}
      {page.data && <Pager pageNo={page.data.pageNumber} pageSize={+q.pageSize || 20} total={page.data.totalCount} onPage={(p, s) => replace('/configs', { ...q, pageNo: p, pageSize: s })} />}
      {dialog === 'import' && <ImportDialog ns={ns} onClose={() => setDialog(null)} onDone={page.reload} />}
      {dialog === 'clone' && <CloneDialog ns={ns} items={[...selected.values()]} onClose={() => setDialog(null)} onDone={() => { setSelected(new Map()); page.reload(); }} />}
    </section>
  );
}

const policies = [['ABORT', 'Abort on the first conflict'], ['SKIP', 'Skip existing configs'], ['OVERWRITE', 'Overwrite existing configs']];

// The import/clone result codes of the 1.x API (their messages are Chinese).
const resultText = {
  200: 'Done',
  100001: 'The target namespace does not exist',
  100002: 'The metadata in the file is not valid',
  100003: 'No valid data was found in the file',
  100004: 'The file could not be read (not a Nacos export zip?)',
  100005: 'There was nothing to write',
  100006: 'No config was selected',
};

function ResultSummary({ r }) {
  if (!r) return null;
  const d = r.data || {};
  return (
    <div class={'alert ' + (r.code === 200 ? 'ok' : 'error')} role="status">
      <p><strong>{resultText[r.code] || r.message}</strong> {d.succCount !== undefined && `— ${d.succCount} written, ${d.skipCount || 0} skipped`}</p>
      {d.failData && <p>Conflict at: {d.failData.map((x) => `${x.group}/${x.dataId}`).join(', ')}</p>}
      {d.skipData && <p>Skipped: {d.skipData.map((x) => `${x.group}/${x.dataId}`).join(', ')}</p>}
      {d.unrecognizedData && <p>Not recognised: {d.unrecognizedData.map((x) => x.itemName).join(', ')}</p>}
    </div>
  );
}

function ImportDialog({ ns, onClose, onDone }) {
  const [policy, setPolicy] = useState('ABORT');
  const [file, setFile] = useState(null);
  const [result, setResult] = useState(null);
  const [busy, run] = useBusy();
  const submit = (e) => run(async () => {
    e.preventDefault();
    const fd = new FormData();
    fd.append('file', file);
    fd.append('policy', policy);
    const r = await request('POST', 'v1/cs/configs', { query: { import: 'true', namespace: ns }, body: fd });
    setResult(r);
    if (r.code === 200) onDone();
  });
  const nsName = (getState().namespaces.find((n) => n.namespace === ns) || {}).namespaceShowName || 'public';
  return (
    <Dialog title={`Import configs into ${nsName}`} onClose={onClose}>
      <form onSubmit={submit}>
        <Field label="Zip file (exported by Nacos or nacosd)"><input type="file" name="file" accept=".zip,application/zip" required onChange={(e) => setFile(e.target.files[0])} /></Field>
        <Field label="When a config already exists">
          <select name="policy" value={policy} onChange={(e) => setPolicy(e.target.value)}>{policies.map(([v, l]) => <option value={v}>{l}</option>)}</select>
        </Field>
        <ResultSummary r={result} />
        <div class="buttons"><button type="button" onClick={onClose}>Close</button><button class="primary" type="submit" disabled={busy || !file}>Import</button></div>
      </form>
    </Dialog>
  );
}

function CloneDialog({ ns, items, onClose, onDone }) {
  const namespaces = getState().namespaces;
  const [target, setTarget] = useState((namespaces.find((n) => n.namespace !== ns) || { namespace: '' }).namespace);
  const [policy, setPolicy] = useState('ABORT');
  const [names, setNames] = useState(items.map((c) => ({ cfgId: c.id, dataId: c.dataId, group: c.group })));
  const [result, setResult] = useState(null);
  const [busy, run] = useBusy();
  const submit = (e) => run(async () => {
    e.preventDefault();
    const r = await request('POST', 'v1/cs/configs', { query: { clone: 'true', tenant: target, policy }, json: names });
    setResult(r);
    if (r.code === 200) onDone();
  });
  const rename = (i, k) => (e) => setNames(names.map((n, j) => (i === j ? { ...n, [k]: e.target.value } : n)));
  return (
    <Dialog title={`Clone ${items.length} configs`} onClose={onClose} wide>
      <form onSubmit={submit}>
        <Field label="Target namespace">
          <select name="target" value={target} onChange={(e) => setTarget(e.target.value)}>
            {namespaces.map((n) => <option value={n.namespace}>{n.namespaceShowName}{n.namespace ? ` (${n.namespace})` : ''}</option>)}
          </select>
        </Field>
        <Field label="When a config already exists">
          <select value={policy} onChange={(e) => setPolicy(e.target.value)}>{policies.map(([v, l]) => <option value={v}>{l}</option>)}</select>
        </Field>
        <table class="grid compact">
          <thead><tr><th>Data ID (new)</th><th>Group (new)</th></tr></thead>
          <tbody>
            {names.map((n, i) => (
              <tr><td><input aria-label="New data ID" value={n.dataId} onInput={rename(i, 'dataId')} /></td><td><input aria-label="New group" value={n.group} onInput={rename(i, 'group')} /></td></tr>
            ))}
          </tbody>
        </table>
        <ResultSummary r={result} />
        <div class="buttons"><button type="button" onClick={onClose}>Close</button><button class="primary" type="submit" disabled={busy}>Clone</button></div>
      </form>
    </Dialog>
  );
}

export { toastError };
