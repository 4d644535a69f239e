// History of a config: list, view a version, diff against the current
// content, roll back (as the Java console: an insert record rolls back by
// deleting the config, an update or delete record by publishing the content
// it holds).
import { useState } from 'preact/hooks';
import { del, get } from '../api.js';
import { href, replace } from '../router.js';
import { CodeEditor } from '../code.jsx';
import { Dialog, Empty, ErrorBox, Field, PageHead, Pager, confirm, fmtTime, toast, useLoad } from '../ui.jsx';
import { PublishDialog, loadConfig, publish } from './configedit.jsx';

const ops = { I: 'created', U: 'updated', D: 'deleted' };

export function History({ q, ns }) {
  const [form, setForm] = useState({ dataId: q.dataId || '', group: q.group || '' });
  const [view, setView] = useState(null);
  const [diff, setDiff] = useState(null);
  const pageNo = +q.pageNo || 1;
  const pageSize = +q.pageSize || 20;
  const has = q.dataId && q.group;
  const page = useLoad(() => (has ? get('v1/cs/history', { search: 'accurate', dataId: q.dataId, group: q.group, tenant: ns, pageNo, pageSize }) : null), [ns, q.dataId, q.group, pageNo, pageSize]);
  const items = (page.data && page.data.pageItems) || [];

  const loadVersion = (h) => get('v1/cs/history', { dataId: q.dataId, group: q.group, tenant: ns, nid: h.id });

  const show = async (h) => {
    try {
      setView(await loadVersion(h));
    } catch (e) {
      toast(e.message, 'error');
    }
  };
  const compare = async (h, rollback) => {
    try {
      const [v, cur] = await Promise.all([loadVersion(h), loadConfig(ns, q.dataId, q.group)]);
      setDiff({ h: v, current: cur, rollback });
    } catch (e) {
      toast(e.message, 'error');
    }
  };
  const rollback = async (h) => {
    const op = h.opType.trim();
    if (op === 'I') {
      if (!(await confirm(`This record is the creation of ${q.dataId}. Rolling it back deletes the config. Continue?`, { okText: 'Delete config', danger: true }))) return;
      await del('v1/cs/configs', { dataId: q.dataId, group: q.group, tenant: ns });
      toast(`Rolled back: ${q.dataId} deleted`);
      page.reload();
      return;
    }
    compare(h, true);
  };
  const doRollback = async () => {
    const { h, current } = diff;
    await publish(ns, { dataId: h.dataId, group: h.group, type: (current && current.type) || 'text', appName: h.appName || (current && current.appName) || '', desc: current ? current.desc || '' : '', tags: current ? current.configTags || '' : '' }, h.content, '');
    setDiff(null);
    toast(`Rolled back ${h.dataId} to version ${h.id}`);
    page.reload();
  };

  return (
    <section>
      <PageHead title="History">
        {has && <a class="button" href={href('/configs/detail', { dataId: q.dataId, group: q.group })}>Config detail</a>}
      </PageHead>
      <form class="searchbar" role="search" onSubmit={(e) => { e.preventDefault(); replace('/history', form); }}>
        <Field label="Data ID"><input required name="dataId" value={form.dataId} onInput={(e) => setForm({ ...form, dataId: e.target.value })} /></Field>
        <Field label="Group"><input required name="group" value={form.group} onInput={(e) => setForm({ ...form, group: e.target.value })} /></Field>
        <button class="primary" type="submit">Show history</button>
      </form>
      <ErrorBox error={page.error} retry={page.reload} />
      {!has && <Empty>Enter a data ID and group (exact) to list the versions of a config.</Empty>}
      {has && page.data && (
        <>
          <div class="tablewrap">
            <table class="grid">
              <thead><tr><th>Version</th><th>Operation</th><th>Time</th><th>By</th><th>From</th><th class="actions">Actions</th></tr></thead>
              <tbody>
                {items.map((h) => (
                  <tr key={h.id}>
                    <td>{h.id}</td>
                    <td>{ops[h.opType.trim()] || h.opType}</td>
                    <td>{fmtTime(h.lastModifiedTime)}</td>
                    <td>{h.srcUser || '—'}</td>
                    <td>{h.srcIp}</td>
                    <td class="actions">
                      <button class="link" onClick={() => show(h)}>View</button>
                      <button class="link" onClick={() => compare(h, false)}>Compare with current</button>
                      <button class="link" onClick={() => rollback(h)}>Roll back</button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {!items.length && <Empty>No history for this config.</Empty>}
          <p class="muted small">An "updated" or "deleted" record holds the content as it was before that change.</p>
          <Pager pageNo={pageNo} pageSize={pageSize} total={page.data.totalCount} onPage={(p, s) => replace('/history', { ...q, pageNo: p, pageSize: s })} />
        </>
      )}
      {view && (
        <Dialog title={`Version ${view.id} of ${view.dataId}`} onClose={() => setView(null)} wide>
          <dl class="props">
            <dt>Operation</dt><dd>{ops[view.opType.trim()] || view.opType}</dd>
            <dt>Time</dt><dd>{fmtTime(view.lastModifiedTime)}</dd>
            <dt>MD5</dt><dd><code>{view.md5}</code></dd>
            <dt>From</dt><dd>{view.srcIp} {view.srcUser ? `(${view.srcUser})` : ''}</dd>
          </dl>
          <CodeEditor value={view.content} type="text" readOnly label="Version content" />
        </Dialog>
      )}
      {diff && (
        <PublishDialog
          title={diff.rollback ? `Roll back ${q.dataId} to version ${diff.h.id}` : `Version ${diff.h.id} compared with the current content`}
          note={diff.current ? 'Left: content live now. Right: content of this version.' : 'The config does not exist now; rolling back re-creates it.'}
          original={diff.current ? diff.current.content : ''} modified={diff.h.content} type={(diff.current && diff.current.type) || 'text'}
          onCancel={() => setDiff(null)}
          onConfirm={diff.rollback ? doRollback : async () => setDiff({ ...diff, rollback: true })}
          confirmText={diff.rollback ? 'Roll back' : 'Roll back to this version…'} />
      )}
    </section>
  );
}
