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

// What a record holds, and so what rolling back to it restores: Java keeps
// the content as it was before an update or a delete, and the content
// created by a creation (whose rollback deletes the config).
const holds = {
  I: 'the content it was created with',
  U: 'the content from before this update',
  D: 'the content that was deleted',
};
const restores = {
  U: 'the content from before this update',
  D: 'the deleted content',
};

export function History({ q, ns }) {
  const [form, setForm] = useState({ dataId: q.dataId || '', group: q.group || '' });
  const [view, setView] = useState(null);
  const [diff, setDiff] = useState(null);
  const pageNo = +q.pageNo || 1;
  const pageSize = +q.pageSize || 20;
  const has = q.dataId && q.group;
  const page = useLoad(() => (has ? get('v1/cs/history', { search: 'accurate', dataId: q.dataId, group: q.group, tenant: ns, pageNo, pageSize }) : null), [ns, q.dataId, q.group, pageNo, pageSize]);
  // Versions are numbered per config, 1 for its oldest record kept (the
  // record ids are global: every config's changes share them), newest first.
  const total = (page.data && page.data.totalCount) || 0;
  const items = ((page.data && page.data.pageItems) || []).map((h, i) => ({ ...h, version: total - ((pageNo - 1) * pageSize + i) }));

  const loadVersion = async (h) => ({ ...(await get('v1/cs/history', { dataId: q.dataId, group: q.group, tenant: ns, nid: h.id })), version: h.version });

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
      if (!(await confirm(`Version ${h.version} is the creation of ${q.dataId}. Rolling it back deletes the config. Continue?`, { okText: 'Delete config', danger: true }))) return;
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
    toast(`Rolled back ${h.dataId}: restored ${restores[h.opType.trim()] || 'the content of this record'} (version ${h.version}, ${fmtTime(h.lastModifiedTime)})`);
    page.reload();
  };
  const what = (h) => `version ${h.version}, ${ops[h.opType.trim()] || h.opType} ${fmtTime(h.lastModifiedTime)}${h.srcUser ? ' by ' + h.srcUser : ''}`;

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
                    <td data-testid="version" title={`history record ${h.id}`}>{h.version}</td>
                    <td>{ops[h.opType.trim()] || h.opType}</td>
                    <td>{fmtTime(h.lastModifiedTime)}</td>
                    <td>{h.srcUser || '—'}</td>
                    <td>{h.srcIp}</td>
                    <td class="actions">
                      <button class="link" onClick={() => show(h)}>View</button>
                      <button class="link" onClick={() => compare(h, false)}>Compare with current</button>
                      <button class="link" onClick={() => rollback(h)} title={h.opType.trim() === 'I' ? 'Delete the config, as before its creation' : `Restore ${restores[h.opType.trim()] || 'its content'}`}>Roll back</button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {!items.length && <Empty>No history for this config.</Empty>}
          <p class="muted small">Versions count this config's changes, 1 for the oldest kept. An "updated" or "deleted" version holds the content as it was before that change, so rolling back to it restores that content; rolling back a creation deletes the config.</p>
          <Pager pageNo={pageNo} pageSize={pageSize} total={page.data.totalCount} onPage={(p, s) => replace('/history', { ...q, pageNo: p, pageSize: s })} />
        </>
      )}
      {view && (
        <Dialog title={`Version ${view.version} of ${view.dataId}`} onClose={() => setView(null)} wide>
          <dl class="props">
            <dt>Operation</dt><dd>{ops[view.opType.trim()] || view.opType}</dd>
            <dt>Content shown</dt><dd>{holds[view.opType.trim()] || 'the content of this record'}</dd>
            <dt>Time</dt><dd>{fmtTime(view.lastModifiedTime)}</dd>
            <dt>MD5</dt><dd><code>{view.md5}</code></dd>
            <dt>From</dt><dd>{view.srcIp} {view.srcUser ? `(${view.srcUser})` : ''}</dd>
          </dl>
          <CodeEditor value={view.content} type="text" readOnly label="Version content" />
        </Dialog>
      )}
      {diff && (
        <PublishDialog
          title={diff.rollback ? `Roll back ${q.dataId}: restore ${restores[diff.h.opType.trim()] || 'this content'} (${what(diff.h)})` : `Version ${diff.h.version} compared with the current content`}
          note={(diff.current ? `Left: content live now. Right: ${holds[diff.h.opType.trim()] || 'the content of this record'} (${what(diff.h)}).` : 'The config does not exist now; rolling back re-creates it.') +
            (diff.rollback ? ' Rolling back publishes the right side.' : '')}
          original={diff.current ? diff.current.content : ''} modified={diff.h.content} type={(diff.current && diff.current.type) || 'text'}
          onCancel={() => setDiff(null)}
          onConfirm={diff.rollback ? doRollback : async () => setDiff({ ...diff, rollback: true })}
          confirmText={diff.rollback ? 'Roll back' : 'Roll back to this version…'} />
      )}
    </section>
  );
}
