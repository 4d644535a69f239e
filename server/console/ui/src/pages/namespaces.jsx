// Namespaces: list with config counts and quota, create, edit, delete.
import { useState } from 'preact/hooks';
import { del, get, post, put, restData } from '../api.js';
import { href } from '../router.js';
import { loadNamespaces } from '../store.js';
import { Dialog, ErrorBox, Field, PageHead, confirm, toast, useBusy, useLoad } from '../ui.jsx';

export function Namespaces() {
  const list = useLoad(loadNamespaces, []);
  const [dialog, setDialog] = useState(null);
  const [, run] = useBusy();
  const rows = list.data || [];
  const remove = (n) => run(async () => {
    const extra = n.configCount ? `\nIts ${n.configCount} configs stay stored but are no longer listed under a namespace.` : '';
    if (!(await confirm(`Delete namespace ${n.namespaceShowName} (${n.namespace})?${extra}`, { okText: 'Delete', danger: true }))) return;
    await del('v1/console/namespaces', { namespaceId: n.namespace });
    toast(`Deleted ${n.namespaceShowName}`);
    list.reload();
  });
  const edit = (n) => run(async () => {
    const d = await get('v1/console/namespaces', { show: 'all', namespaceId: n.namespace });
    setDialog({ kind: 'edit', n: d });
  });
  return (
    <section>
      <PageHead title="Namespaces">
        <button onClick={list.reload}>Refresh</button>
        <button class="primary" onClick={() => setDialog({ kind: 'new' })}>New namespace</button>
      </PageHead>
      <ErrorBox error={list.error} retry={list.reload} />
      <div class="tablewrap">
        <table class="grid" data-testid="namespaces">
          <thead><tr><th>Name</th><th>ID</th><th>Configs</th><th>Quota</th><th class="actions">Actions</th></tr></thead>
          <tbody>
            {rows.map((n) => (
              <tr key={n.namespace}>
                <td>{n.namespaceShowName}</td>
                <td><code data-id={n.namespace}>{n.namespace || '(empty: public)'}</code></td>
                <td>{n.configCount}</td>
                <td>{n.quota}</td>
                <td class="actions">
                  <a href={href('/configs', { namespace: n.namespace })}>Configs</a>
                  <a href={href('/services', { namespace: n.namespace })}>Services</a>
                  {n.type !== 0 && <button class="link" onClick={() => edit(n)}>Edit</button>}
                  {n.type !== 0 && <button class="link danger" onClick={() => remove(n)}>Delete</button>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {dialog && <NamespaceDialog d={dialog} onClose={() => setDialog(null)} onDone={list.reload} />}
    </section>
  );
}

function NamespaceDialog({ d, onClose, onDone }) {
  const isNew = d.kind === 'new';
  const [f, setF] = useState(isNew ? { id: '', name: '', desc: '' } : { id: d.n.namespace, name: d.n.namespaceShowName, desc: d.n.namespaceDesc || '' });
  const [busy, run] = useBusy();
  const set = (k) => (e) => setF({ ...f, [k]: e.target.value });
  const submit = (e) => run(async () => {
    e.preventDefault();
    if (isNew) {
      if (f.id && !/^[\w-]+$/.test(f.id.trim())) throw new Error('The ID may only contain letters, digits, _ and -');
      if (f.id && restData(await get('v1/console/namespaces', { checkNamespaceIdExist: 'true', customNamespaceId: f.id.trim() }))) throw new Error(`Namespace ID ${f.id} already exists`);
      const ok = await post('v1/console/namespaces', { customNamespaceId: f.id.trim(), namespaceName: f.name, namespaceDesc: f.desc });
      if (ok !== true) throw new Error('The server refused the namespace (invalid or duplicate ID)');
    } else {
      await put('v1/console/namespaces', { namespace: f.id, namespaceShowName: f.name, namespaceDesc: f.desc });
    }
    toast(isNew ? `Created ${f.name}` : `Updated ${f.name}`);
    onDone();
    onClose();
  });
  return (
    <Dialog title={isNew ? 'New namespace' : `Edit namespace ${f.id}`} onClose={onClose}>
      <form onSubmit={submit}>
        <Field label="ID" hint={isNew ? 'optional: letters, digits, _ and -; empty generates a UUID' : 'cannot be changed'}><input name="customNamespaceId" value={f.id} readOnly={!isNew} onInput={set('id')} maxLength={128} /></Field>
        <Field label="Name"><input name="namespaceName" required autofocus value={f.name} onInput={set('name')} /></Field>
        <Field label="Description"><textarea name="namespaceDesc" rows={3} value={f.desc} onInput={set('desc')} /></Field>
        <div class="buttons"><button type="button" onClick={onClose}>Cancel</button><button class="primary" type="submit" disabled={busy}>{isNew ? 'Create' : 'Save'}</button></div>
      </form>
    </Dialog>
  );
}
