// One service: properties, clusters with their health-check settings and
// instances (edit weight/metadata/enabled, take offline), subscribers.
// Instances refresh live from the server's event stream.
import { useState } from 'preact/hooks';
import { get, patch, put } from '../api.js';
import { href, replace } from '../router.js';
import { namingNs } from '../store.js';
import { Badge, Dialog, Empty, ErrorBox, Field, PageHead, Pager, fmtTime, metaToText, textToMeta, toast, useBusy, useLoad } from '../ui.jsx';
import { LiveBadge, useServiceEvents } from './live.jsx';
import { grouped } from './services.jsx';

const instancePageSize = 50;

export function ServiceDetail({ q, ns }) {
  if (!q.name) return <p class="alert error">No service named in the address. <a href="#/services">Pick one from the list</a></p>;
  return <ServiceDetailOf q={q} ns={ns} />;
}

function ServiceDetailOf({ q, ns }) {
  const nsId = namingNs(ns);
  const svc = grouped(q.name, q.group);
  const tab = q.tab === 'subscribers' ? 'subscribers' : 'instances';
  const [dialog, setDialog] = useState(null);
  const [pages, setPages] = useState({});
  const detail = useLoad(async () => {
    const d = await get('v1/ns/catalog/service', { namespaceId: nsId, serviceName: svc });
    const owner = await get('v1/ns/operator/distro/server', { namespaceId: nsId, serviceName: svc }).catch(() => null);
    const instances = {};
    await Promise.all(d.clusters.map(async (c) => {
      instances[c.name] = await get('v1/ns/catalog/instances', { namespaceId: nsId, serviceName: svc, clusterName: c.name, pageNo: pages[c.name] || 1, pageSize: instancePageSize });
    }));
    return { ...d, instances, owner: owner && owner.responsibleServer, at: Date.now() };
  }, [nsId, svc, JSON.stringify(pages)]);
  const live = useServiceEvents({ namespaceId: nsId, serviceName: svc }, detail.reload, 300, tab === 'instances');
  const d = detail.data;
  const s = d && d.service;
  const key = { name: q.name, group: q.group };

  return (
    <section>
      <PageHead title={`Service ${q.name || ''}`}>
        {tab === 'instances' && <LiveBadge state={live} />}
        <a class="button" href="#/services">Back to list</a>
      </PageHead>
      <ErrorBox error={detail.error} retry={detail.reload} />
      {s && (
        <>
          <div class="card">
            <div class="cardhead"><h2>Service</h2><button onClick={() => setDialog({ kind: 'service' })}>Edit service</button></div>
            <dl class="props">
              <dt>Name</dt><dd>{s.name}</dd>
              <dt>Group</dt><dd>{s.groupName}</dd>
              <dt>Namespace</dt><dd>{nsId}</dd>
              <dt>Protect threshold</dt><dd>{s.protectThreshold}</dd>
              <dt>Selector</dt><dd>{s.selector.type === 'label' ? `label: ${s.selector.expression}` : s.selector.type}</dd>
              <dt>Metadata</dt><dd>{Object.keys(s.metadata || {}).length ? <code class="pre">{metaToText(s.metadata)}</code> : '—'}</dd>
              <dt>Distro owner</dt><dd>{d.owner || '—'}</dd>
            </dl>
          </div>
          <div class="tabs" role="tablist">
            <a role="tab" aria-selected={tab === 'instances'} class={tab === 'instances' ? 'active' : ''} href={href('/services/detail', key)}>Clusters and instances</a>
            <a role="tab" aria-selected={tab === 'subscribers'} class={tab === 'subscribers' ? 'active' : ''} href={href('/services/detail', { ...key, tab: 'subscribers' })}>Subscribers</a>
          </div>
          {tab === 'subscribers' ? <Subscribers nsId={nsId} svc={svc} q={q} /> : (
            <>
              {!d.clusters.length && <Empty>This service has no clusters (no instance was ever registered).</Empty>}
              {d.clusters.map((c) => (
                <ClusterCard c={c} list={d.instances[c.name]} pageNo={pages[c.name] || 1}
                  onPage={(p) => setPages({ ...pages, [c.name]: p })}
                  onEdit={() => setDialog({ kind: 'cluster', c })}
                  onEditInstance={(i) => setDialog({ kind: 'instance', i })}
                  nsId={nsId} svc={svc} reload={detail.reload} />
              ))}
              <p class="muted small">Updated {fmtTime(d.at)}.</p>
            </>
          )}
        </>
      )}
      {dialog && dialog.kind === 'service' && <EditService s={s} nsId={nsId} svc={svc} onClose={() => setDialog(null)} onDone={detail.reload} />}
      {dialog && dialog.kind === 'cluster' && <EditCluster c={dialog.c} nsId={nsId} svc={svc} onClose={() => setDialog(null)} onDone={detail.reload} />}
      {dialog && dialog.kind === 'instance' && <EditInstance i={dialog.i} nsId={nsId} svc={svc} onClose={() => setDialog(null)} onDone={detail.reload} />}
    </section>
  );
}

function checkerText(h) {
  if (!h) return '';
  if (h.type === 'HTTP') return `HTTP ${h.path || '/'} expects ${h.expectedResponseCode}`;
  return h.type;
}

function ClusterCard({ c, list, pageNo, onPage, onEdit, onEditInstance, nsId, svc, reload }) {
  const [busy, run] = useBusy();
  const setEnabled = (i, enabled) => run(async () => {
    await patch('v1/ns/instance', { namespaceId: nsId, serviceName: svc, clusterName: i.clusterName, ip: i.ip, port: i.port, enabled: String(enabled) });
    toast(`${i.ip}:${i.port} is ${enabled ? 'online' : 'offline'}`);
    reload();
  });
  // stable order: by IP (numerically for IPv4), then port
  const rows = ((list && list.list) || []).slice().sort((a, b) => a.ip.localeCompare(b.ip, undefined, { numeric: true }) || a.port - b.port);
  return (
    <div class="card" data-cluster={c.name}>
      <div class="cardhead">
        <h2>Cluster {c.name}</h2>
        <span class="muted">health check: {checkerText(c.healthChecker)}, port {c.useIPPort4Check ? 'of each instance' : c.defCkport}</span>
        <button onClick={onEdit}>Health check…</button>
      </div>
      <div class="tablewrap">
        <table class="grid" data-testid={'instances-' + c.name}>
          <thead><tr><th>IP</th><th>Port</th><th>Ephemeral</th><th>Weight</th><th>Healthy</th><th>Enabled</th><th>Metadata</th><th class="actions">Actions</th></tr></thead>
          <tbody>
            {rows.map((i) => (
              <tr key={i.ip + ':' + i.port} class={i.enabled ? '' : 'off'} data-instance={i.ip + ':' + i.port}>
                <td>{i.ip}</td>
                <td>{i.port}</td>
                <td>{String(i.ephemeral)}</td>
                <td>{i.weight}</td>
                <td>{i.healthy ? <Badge kind="ok">healthy</Badge> : <Badge kind="bad">unhealthy</Badge>}</td>
                <td>{i.enabled ? 'online' : <Badge kind="warn">offline</Badge>}</td>
                <td class="meta">{Object.entries(i.metadata || {}).map(([k, v]) => <span class="kv">{k}={v}</span>)}</td>
                <td class="actions">
                  <button class="link" onClick={() => onEditInstance(i)}>Edit</button>
                  <button class="link" disabled={busy} onClick={() => setEnabled(i, !i.enabled)}>{i.enabled ? 'Take offline' : 'Bring online'}</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list && !rows.length && <Empty>No instances in this cluster.</Empty>}
      {list && list.count > instancePageSize && <Pager pageNo={pageNo} pageSize={instancePageSize} total={list.count} sizes={[instancePageSize]} onPage={(p) => onPage(p)} />}
    </div>
  );
}

function EditService({ s, nsId, svc, onClose, onDone }) {
  const [f, setF] = useState({ threshold: String(s.protectThreshold), metadata: metaToText(s.metadata), selector: s.selector.type === 'label' ? 'label' : 'none', expression: s.selector.expression || '' });
  const [busy, run] = useBusy();
  const set = (k) => (e) => setF({ ...f, [k]: e.target.value });
  const submit = (e) => run(async () => {
    e.preventDefault();
    const selector = JSON.stringify(f.selector === 'label' ? { type: 'label', expression: f.expression } : { type: 'none' });
    await put('v1/ns/service', { namespaceId: nsId, serviceName: svc, protectThreshold: f.threshold, metadata: JSON.stringify(textToMeta(f.metadata)), selector });
    toast('Service updated');
    onDone();
    onClose();
  });
  return (
    <Dialog title={`Edit service ${s.name}`} onClose={onClose}>
      <form onSubmit={submit}>
        <Field label="Protect threshold" hint="0 to 1"><input name="protectThreshold" type="number" min="0" max="1" step="0.01" value={f.threshold} onInput={set('threshold')} /></Field>
        <Field label="Metadata" hint="one key=value per line"><textarea name="metadata" rows={4} value={f.metadata} onInput={set('metadata')} /></Field>
        <Field label="Selector"><select name="selector" value={f.selector} onChange={set('selector')}><option value="none">none</option><option value="label">label</option></select></Field>
        {f.selector === 'label' && <Field label="Label expression" hint="CONSUMER.label.k = PROVIDER.label.k, joined by &"><input name="expression" value={f.expression} onInput={set('expression')} /></Field>}
        <div class="buttons"><button type="button" onClick={onClose}>Cancel</button><button class="primary" type="submit" disabled={busy}>Save</button></div>
      </form>
    </Dialog>
  );
}

function EditCluster({ c, nsId, svc, onClose, onDone }) {
  const h = c.healthChecker || { type: 'TCP' };
  const [f, setF] = useState({ type: h.type, path: h.path || '', headers: h.headers || '', code: String(h.expectedResponseCode || 200), checkPort: String(c.defCkport), useIP: !!c.useIPPort4Check, metadata: metaToText(c.metadata) });
  const [busy, run] = useBusy();
  const set = (k) => (e) => setF({ ...f, [k]: e.target.type === 'checkbox' ? e.target.checked : e.target.value });
  const submit = (e) => run(async () => {
    e.preventDefault();
    const checker = f.type === 'HTTP' ? { type: 'HTTP', path: f.path, headers: f.headers, expectedResponseCode: +f.code } : { type: f.type };
    await put('v1/ns/cluster', { namespaceId: nsId, serviceName: svc, clusterName: c.name, checkPort: f.checkPort, useInstancePort4Check: String(f.useIP), healthChecker: JSON.stringify(checker), metadata: JSON.stringify(textToMeta(f.metadata)) });
    toast(`Cluster ${c.name} updated`);
    onDone();
    onClose();
  });
  return (
    <Dialog title={`Health check of cluster ${c.name}`} onClose={onClose}>
      <form onSubmit={submit}>
        <Field label="Check type" hint="for persistent instances; ephemeral ones report by heartbeat">
          <select name="type" value={f.type} onChange={set('type')}>{['TCP', 'HTTP', 'MYSQL', 'NONE'].map((t) => <option value={t}>{t}</option>)}</select>
        </Field>
        {f.type === 'HTTP' && (
          <>
            <Field label="Path"><input name="path" value={f.path} onInput={set('path')} placeholder="/health" /></Field>
            <Field label="Headers" hint="Name:Value pairs separated by |"><input name="headers" value={f.headers} onInput={set('headers')} /></Field>
            <Field label="Expected status"><input name="expectedResponseCode" type="number" value={f.code} onInput={set('code')} /></Field>
          </>
        )}
        <label class="inline"><input type="checkbox" name="useInstancePort4Check" checked={f.useIP} onChange={set('useIP')} /> Check the port of each instance</label>
        {!f.useIP && <Field label="Check port"><input name="checkPort" type="number" min="0" max="65535" value={f.checkPort} onInput={set('checkPort')} /></Field>}
        <Field label="Cluster metadata" hint="one key=value per line"><textarea name="metadata" rows={3} value={f.metadata} onInput={set('metadata')} /></Field>
        <div class="buttons"><button type="button" onClick={onClose}>Cancel</button><button class="primary" type="submit" disabled={busy}>Save</button></div>
      </form>
    </Dialog>
  );
}

function EditInstance({ i, nsId, svc, onClose, onDone }) {
  const [f, setF] = useState({ weight: String(i.weight), enabled: i.enabled, metadata: metaToText(i.metadata) });
  const [busy, run] = useBusy();
  const set = (k) => (e) => setF({ ...f, [k]: e.target.type === 'checkbox' ? e.target.checked : e.target.value });
  const submit = (e) => run(async () => {
    e.preventDefault();
    await patch('v1/ns/instance', { namespaceId: nsId, serviceName: svc, clusterName: i.clusterName, ip: i.ip, port: i.port, weight: f.weight, enabled: String(f.enabled), metadata: JSON.stringify(textToMeta(f.metadata)) });
    toast(`${i.ip}:${i.port} updated`);
    onDone();
    onClose();
  });
  return (
    <Dialog title={`Instance ${i.ip}:${i.port}`} onClose={onClose}>
      <form onSubmit={submit}>
        <Field label="Weight" hint="0 to 10000; 0 receives no traffic from weighted clients"><input name="weight" type="number" min="0" max="10000" step="any" value={f.weight} onInput={set('weight')} /></Field>
        <label class="inline"><input type="checkbox" name="enabled" checked={f.enabled} onChange={set('enabled')} /> Enabled (online)</label>
        <Field label="Metadata" hint="one key=value per line"><textarea name="metadata" rows={5} value={f.metadata} onInput={set('metadata')} /></Field>
        <div class="buttons"><button type="button" onClick={onClose}>Cancel</button><button class="primary" type="submit" disabled={busy}>Save</button></div>
      </form>
    </Dialog>
  );
}

function Subscribers({ nsId, svc, q }) {
  const pageNo = +q.pageNo || 1;
  const pageSize = +q.pageSize || 20;
  const subs = useLoad(() => get('v1/ns/service/subscribers', { namespaceId: nsId, serviceName: svc, pageNo, pageSize }), [nsId, svc, pageNo, pageSize]);
  const rows = (subs.data && subs.data.subscribers) || [];
  return (
    <div class="card">
      <div class="cardhead"><h2>Subscribers</h2><button onClick={subs.reload}>Refresh</button></div>
      <ErrorBox error={subs.error} retry={subs.reload} />
      <div class="tablewrap">
        <table class="grid" data-testid="subscribers">
          <thead><tr><th>Address</th><th>Agent</th><th>App</th><th>Service</th></tr></thead>
          <tbody>{rows.map((r) => <tr><td>{r.addrStr}</td><td>{r.agent}</td><td>{r.app}</td><td>{r.serviceName}</td></tr>)}</tbody>
        </table>
      </div>
      {subs.data && !rows.length && <Empty>No client subscribes to this service (subscribers are clients that asked for instance updates by UDP push).</Empty>}
      {subs.data && subs.data.count > pageSize && <Pager pageNo={pageNo} pageSize={pageSize} total={subs.data.count} onPage={(p, s) => replace('/services/detail', { ...q, pageNo: p, pageSize: s })} />}
    </div>
  );
}
