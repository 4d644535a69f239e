// Services: search, hide empty, paging, create, delete; refreshed live.
import { useState } from 'preact/hooks';
import { del, get, post } from '../api.js';
import { href, replace } from '../router.js';
import { namingNs } from '../store.js';
import { Badge, Dialog, Empty, ErrorBox, Field, PageHead, Pager, confirm, textToMeta, toast, useBusy, useLoad } from '../ui.jsx';
import { LiveBadge, useServiceEvents } from './live.jsx';

export const grouped = (name, group) => `${group || 'DEFAULT_GROUP'}@@${name}`;

export function Services({ q, ns }) {
  const [form, setForm] = useState({ name: q.name || '', group: q.group || '', hideEmpty: q.hideEmpty === '1' });
  const [creating, setCreating] = useState(false);
  const [, run] = useBusy();
  const pageNo = +q.pageNo || 1;
  const pageSize = +q.pageSize || 20;
  const list = useLoad(() => get('v1/ns/catalog/services', {
    namespaceId: namingNs(ns), pageNo, pageSize, serviceNameParam: q.name || '', groupNameParam: q.group || '', hasIpCount: q.hideEmpty === '1' ? 'true' : 'false',
  }), [ns, pageNo, pageSize, q.name, q.group, q.hideEmpty]);
  const live = useServiceEvents({ namespaceId: namingNs(ns) }, list.reload, 2000);
  const rows = (list.data && list.data.serviceList) || [];

  const remove = (s) => run(async () => {
    const msg = s.ipCount > 0 ? `Service ${s.name} still has ${s.ipCount} instances. Delete it anyway? Its instances are removed with it.` : `Delete service ${s.name} (group ${s.groupName})?`;
    if (!(await confirm(msg, { okText: 'Delete', danger: true }))) return;
    await del('v1/ns/service', { namespaceId: namingNs(ns), serviceName: grouped(s.name, s.groupName) });
    toast(`Deleted ${s.name}`);
    list.reload();
  });
  const search = (e) => {
    e.preventDefault();
    replace('/services', { name: form.name, group: form.group, hideEmpty: form.hideEmpty ? '1' : '', pageSize: q.pageSize });
  };

  return (
    <section>
      <PageHead title="Services">
        <LiveBadge state={live} />
        <button class="primary" onClick={() => setCreating(true)}>New service</button>
      </PageHead>
      <form class="searchbar" role="search" onSubmit={search}>
        <Field label="Service name"><input name="name" value={form.name} onInput={(e) => setForm({ ...form, name: e.target.value })} placeholder="contains" /></Field>
        <Field label="Group"><input name="group" value={form.group} onInput={(e) => setForm({ ...form, group: e.target.value })} placeholder="contains" /></Field>
        <label class="inline"><input type="checkbox" name="hideEmpty" checked={form.hideEmpty} onChange={(e) => setForm({ ...form, hideEmpty: e.target.checked })} /> Hide empty services</label>
        <button class="primary" type="submit">Search</button>
      </form>
      <ErrorBox error={list.error} retry={list.reload} />
      <div class="tablewrap">
        <table class="grid" data-testid="services" aria-busy={list.loading}>
          <thead><tr><th>Service</th><th>Group</th><th>Clusters</th><th>Instances</th><th>Healthy</th><th>Protection</th><th class="actions">Actions</th></tr></thead>
          <tbody>
            {rows.map((s) => (
              <tr key={s.groupName + '@@' + s.name}>
                <td><a href={href('/services/detail', { name: s.name, group: s.groupName })}>{s.name}</a></td>
                <td>{s.groupName}</td>
                <td>{s.clusterCount}</td>
                <td>{s.ipCount}</td>
                <td>{s.healthyInstanceCount}</td>
                <td>{s.triggerFlag === 'true' ? <Badge kind="warn">threshold reached</Badge> : ''}</td>
                <td class="actions">
                  <a href={href('/services/detail', { name: s.name, group: s.groupName })}>Detail</a>
                  <a href={href('/services/detail', { name: s.name, group: s.groupName, tab: 'subscribers' })}>Subscribers</a>
                  <button class="link danger" onClick={() => remove(s)}>Delete</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.data && !rows.length && <Empty>No services match.</Empty>}
      {list.data && <Pager pageNo={pageNo} pageSize={pageSize} total={list.data.count} onPage={(p, s) => replace('/services', { ...q, pageNo: p, pageSize: s })} />}
      {creating && <CreateService ns={ns} onClose={() => setCreating(false)} onDone={list.reload} />}
    </section>
  );
}

function CreateService({ ns, onClose, onDone }) {
  const [f, setF] = useState({ name: '', group: 'DEFAULT_GROUP', threshold: '0', metadata: '', selector: 'none', expression: '' });
  const [busy, run] = useBusy();
  const set = (k) => (e) => setF({ ...f, [k]: e.target.value });
  const submit = (e) => run(async () => {
    e.preventDefault();
    const metadata = JSON.stringify(textToMeta(f.metadata));
    const selector = JSON.stringify(f.selector === 'label' ? { type: 'label', expression: f.expression } : { type: 'none' });
    await post('v1/ns/service', { namespaceId: namingNs(ns), serviceName: grouped(f.name.trim(), f.group.trim()), protectThreshold: f.threshold, metadata, selector });
    toast(`Created ${f.name}`);
    onDone();
    onClose();
  });
  return (
    <Dialog title="New service" onClose={onClose}>
      <form onSubmit={submit}>
        <Field label="Service name"><input name="serviceName" required autofocus value={f.name} onInput={set('name')} /></Field>
        <Field label="Group"><input name="groupName" required value={f.group} onInput={set('group')} /></Field>
        <Field label="Protect threshold" hint="0 to 1: when the healthy share is at or below it, unhealthy instances are returned too"><input name="protectThreshold" type="number" min="0" max="1" step="0.01" value={f.threshold} onInput={set('threshold')} /></Field>
        <Field label="Metadata" hint="one key=value per line"><textarea name="metadata" rows={3} value={f.metadata} onInput={set('metadata')} /></Field>
        <Field label="Selector">
          <select name="selector" value={f.selector} onChange={set('selector')}><option value="none">none</option><option value="label">label</option></select>
        </Field>
        {f.selector === 'label' && <Field label="Label expression" hint="e.g. CONSUMER.label.env = PROVIDER.label.env"><input name="expression" value={f.expression} onInput={set('expression')} /></Field>}
        <div class="buttons"><button type="button" onClick={onClose}>Cancel</button><button class="primary" type="submit" disabled={busy}>Create</button></div>
      </form>
    </Dialog>
  );
}
