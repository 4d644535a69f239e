// Users, roles and permissions (the 1.4.8 /v1/auth API). Each list pages on
// the server; a server without the API gets a clear message.
import { useRef, useState } from 'preact/hooks';
import { del, get, post, put, restData } from '../api.js';
import { replace } from '../router.js';
import { getState, setState } from '../store.js';
import { Dialog, Empty, ErrorBox, Field, PageHead, Pager, confirm, toast, useBusy, useLoad } from '../ui.jsx';

function NotAvailable({ error }) {
  if (!error) return null;
  if (error.status === 404 || error.status === 501) {
    return <p class="alert info">This server does not offer user management (/v1/auth) yet.</p>;
  }
  return <ErrorBox error={error} />;
}

// okMessage checks a RestResult of a user/role/permission write.
function ok(r) {
  restData(r);
  return (r && r.message) || 'done';
}

function usePaged(path, q, extra) {
  const pageNo = +q.pageNo || 1;
  const pageSize = +q.pageSize || 20;
  const l = useLoad(() => get(path, { pageNo, pageSize, ...extra }), [path, pageNo, pageSize, JSON.stringify(extra)]);
  return { ...l, pageNo, pageSize, rows: (l.data && l.data.pageItems) || [] };
}

function Paging({ l, route, q }) {
  return l.data ? <Pager pageNo={l.pageNo} pageSize={l.pageSize} total={l.data.totalCount} onPage={(p, s) => replace(route, { ...q, pageNo: p, pageSize: s })} /> : null;
}

export function Users({ q }) {
  const l = usePaged('v1/auth/users', q, {});
  const [dialog, setDialog] = useState(null);
  const [, run] = useBusy();
  const remove = (u) => run(async () => {
    if (!(await confirm(`Delete user ${u.username}?`, { okText: 'Delete', danger: true }))) return;
    toast(ok(await del('v1/auth/users', { username: u.username })));
    l.reload();
  });
  return (
    <section>
      <PageHead title="Users"><button class="primary" onClick={() => setDialog({ kind: 'new' })}>New user</button></PageHead>
      <NotAvailable error={l.error} />
      <div class="tablewrap">
        <table class="grid" data-testid="users">
          <thead><tr><th>User name</th><th class="actions">Actions</th></tr></thead>
          <tbody>{l.rows.map((u) => (
            <tr key={u.username}><td data-user={u.username}>{u.username}</td><td class="actions">
              <button class="link" onClick={() => setDialog({ kind: 'password', u })}>Change password</button>
              <button class="link danger" onClick={() => remove(u)}>Delete</button>
            </td></tr>
          ))}</tbody>
        </table>
      </div>
      <Paging l={l} route="/users" q={q} />
      {dialog && <UserDialog d={dialog} onClose={() => setDialog(null)} onDone={l.reload} />}
    </section>
  );
}

function UserDialog({ d, onClose, onDone }) {
  const isNew = d.kind === 'new';
  const [f, setF] = useState({ username: isNew ? '' : d.u.username, password: '', again: '' });
  const [busy, run] = useBusy();
  const set = (k) => (e) => setF({ ...f, [k]: e.target.value });
  const submit = (e) => run(async () => {
    e.preventDefault();
    if (f.password !== f.again) throw new Error('The passwords differ');
    const r = isNew
      ? await post('v1/auth/users', { username: f.username, password: f.password })
      : await put('v1/auth/users', { username: f.username, newPassword: f.password });
    toast(ok(r));
    // the banner about nacos's default password goes with a new one
    const info = getState().info;
    if (!isNew && f.username === 'nacos' && f.password !== 'nacos' && info && info.defaultAdminPassword) setState({ info: { ...info, defaultAdminPassword: false } });
    onDone();
    onClose();
  });
  return (
    <Dialog title={isNew ? 'New user' : `Password of ${f.username}`} onClose={onClose}>
      <form onSubmit={submit}>
        <Field label="User name"><input name="username" required readOnly={!isNew} autofocus={isNew} value={f.username} onInput={set('username')} /></Field>
        <Field label={isNew ? 'Password' : 'New password'}><input name="password" type="password" autocomplete="new-password" required value={f.password} onInput={set('password')} /></Field>
        <Field label="Password again"><input name="again" type="password" autocomplete="new-password" required value={f.again} onInput={set('again')} /></Field>
        <div class="buttons"><button type="button" onClick={onClose}>Cancel</button><button class="primary" type="submit" disabled={busy}>Save</button></div>
      </form>
    </Dialog>
  );
}

export function Roles({ q }) {
  const [filter, setFilter] = useState(q.username || '');
  const l = usePaged('v1/auth/roles', q, { username: q.username || '' });
  const [adding, setAdding] = useState(false);
  const [, run] = useBusy();
  const remove = (r) => run(async () => {
    if (!(await confirm(`Remove role ${r.role} from ${r.username}?`, { okText: 'Remove', danger: true }))) return;
    toast(ok(await del('v1/auth/roles', { role: r.role, username: r.username })));
    l.reload();
  });
  return (
    <section>
      <PageHead title="Roles"><button class="primary" onClick={() => setAdding(true)}>Bind role</button></PageHead>
      <form class="searchbar" role="search" onSubmit={(e) => { e.preventDefault(); replace('/roles', { username: filter }); }}>
        <Field label="User name"><input value={filter} onInput={(e) => setFilter(e.target.value)} placeholder="all users" /></Field>
        <button class="primary" type="submit">Search</button>
      </form>
      <NotAvailable error={l.error} />
      <div class="tablewrap">
        <table class="grid" data-testid="roles">
          <thead><tr><th>Role</th><th>User name</th><th class="actions">Actions</th></tr></thead>
          <tbody>{l.rows.map((r) => (
            <tr key={r.role + '|' + r.username}><td>{r.role}</td><td>{r.username}</td><td class="actions">
              {r.role !== 'ROLE_ADMIN' && <button class="link danger" onClick={() => remove(r)}>Remove</button>}
            </td></tr>
          ))}</tbody>
        </table>
      </div>
      {l.data && !l.rows.length && <Empty>No roles.</Empty>}
      <Paging l={l} route="/roles" q={q} />
      {adding && <SimpleForm title="Bind a role to a user" fields={[['role', 'Role', searchRoles], ['username', 'User name', searchUsers]]} onClose={() => setAdding(false)}
        submit={async (v) => { toast(ok(await post('v1/auth/roles', v))); l.reload(); }} />}
    </section>
  );
}

export function Permissions({ q }) {
  const [filter, setFilter] = useState(q.role || '');
  const l = usePaged('v1/auth/permissions', q, { role: q.role || '' });
  const [adding, setAdding] = useState(false);
  const [, run] = useBusy();
  const remove = (p) => run(async () => {
    if (!(await confirm(`Remove permission ${p.action} on ${p.resource} from role ${p.role}?`, { okText: 'Remove', danger: true }))) return;
    toast(ok(await del('v1/auth/permissions', { role: p.role, resource: p.resource, action: p.action })));
    l.reload();
  });
  const nsOptions = getState().namespaces;
  return (
    <section>
      <PageHead title="Permissions"><button class="primary" onClick={() => setAdding(true)}>Add permission</button></PageHead>
      <form class="searchbar" role="search" onSubmit={(e) => { e.preventDefault(); replace('/permissions', { role: filter }); }}>
        <Field label="Role"><input value={filter} onInput={(e) => setFilter(e.target.value)} placeholder="all roles" /></Field>
        <button class="primary" type="submit">Search</button>
      </form>
      <NotAvailable error={l.error} />
      <div class="tablewrap">
        <table class="grid" data-testid="permissions">
          <thead><tr><th>Role</th><th>Resource</th><th>Action</th><th class="actions">Actions</th></tr></thead>
          <tbody>{l.rows.map((p) => (
            <tr key={p.role + p.resource + p.action}><td>{p.role}</td><td><code>{p.resource}</code></td><td>{{ r: 'read', w: 'write', rw: 'read and write' }[p.action] || p.action}</td>
              <td class="actions"><button class="link danger" onClick={() => remove(p)}>Remove</button></td></tr>
          ))}</tbody>
        </table>
      </div>
      {l.data && !l.rows.length && <Empty>No permissions.</Empty>}
      <Paging l={l} route="/permissions" q={q} />
      {adding && <PermissionDialog namespaces={nsOptions} onClose={() => setAdding(false)} onDone={l.reload} />}
    </section>
  );
}

function PermissionDialog({ namespaces, onClose, onDone }) {
  const [f, setF] = useState({ role: '', ns: '', action: 'r' });
  const [busy, run] = useBusy();
  const set = (k) => (e) => setF({ ...f, [k]: e.target.value });
  const submit = (e) => run(async () => {
    e.preventDefault();
    // The Java console grants on a whole namespace: "<ns>:*:*".
    toast(ok(await post('v1/auth/permissions', { role: f.role, resource: `${f.ns}:*:*`, action: f.action })));
    onDone();
    onClose();
  });
  return (
    <Dialog title="Add permission" onClose={onClose}>
      <form onSubmit={submit}>
        <Field label="Role" hint="a role bound to users on the Roles page"><Suggest name="role" autofocus value={f.role} search={searchRoles} onInput={set('role')} /></Field>
        <Field label="Namespace (resource)">
          <select name="resource" value={f.ns} onChange={set('ns')}>{namespaces.map((n) => <option value={n.namespace}>{n.namespaceShowName}{n.namespace ? ` (${n.namespace})` : ''}</option>)}</select>
        </Field>
        <Field label="Action">
          <select name="action" value={f.action} onChange={set('action')}><option value="r">read</option><option value="w">write</option><option value="rw">read and write</option></select>
        </Field>
        <div class="buttons"><button type="button" onClick={onClose}>Cancel</button><button class="primary" type="submit" disabled={busy}>Add</button></div>
      </form>
    </Dialog>
  );
}

// Suggest is an input with a <datalist> filled, as the user types, from
// the server's search (user names, roles), as the Java console suggests.
function Suggest({ name, value, onInput, search, autofocus }) {
  const [opts, setOpts] = useState([]);
  const id = 'suggest-' + name;
  const seq = useRef(0);
  const input = (e) => {
    onInput(e);
    const v = e.target.value;
    const n = ++seq.current;
    if (!v) return setOpts([]);
    search(v).then((l) => n === seq.current && setOpts((l || []).slice(0, 20)), () => {});
  };
  return (
    <>
      <input name={name} required autofocus={autofocus} list={id} autocomplete="off" value={value} onInput={input} />
      <datalist id={id}>{opts.map((o) => <option value={o} />)}</datalist>
    </>
  );
}

export const searchUsers = (v) => get('v1/auth/users/search', { username: v });
export const searchRoles = (v) => get('v1/auth/roles/search', { role: v });

function SimpleForm({ title, fields, submit, onClose }) {
  const [v, setV] = useState(Object.fromEntries(fields.map(([k]) => [k, ''])));
  const [busy, run] = useBusy();
  return (
    <Dialog title={title} onClose={onClose}>
      <form onSubmit={(e) => run(async () => { e.preventDefault(); await submit(v); onClose(); })}>
        {fields.map(([k, label, search], i) => (
          <Field label={label}>
            {search
              ? <Suggest name={k} autofocus={i === 0} value={v[k]} search={search} onInput={(e) => setV({ ...v, [k]: e.target.value })} />
              : <input name={k} required autofocus={i === 0} value={v[k]} onInput={(e) => setV({ ...v, [k]: e.target.value })} />}
          </Field>
        ))}
        <div class="buttons"><button type="button" onClick={onClose}>Cancel</button><button class="primary" type="submit" disabled={busy}>Save</button></div>
      </form>
    </Dialog>
  );
}
