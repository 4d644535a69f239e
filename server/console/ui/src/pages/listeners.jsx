// Listener queries: who listens to a config, and what an IP listens to,
// with the MD5 each client holds and whether it is up to date. Refreshes
// every few seconds while "Live" is on.
import { useState } from 'preact/hooks';
import { get, request } from '../api.js';
import { href, replace } from '../router.js';
import { Badge, Empty, ErrorBox, Field, PageHead, useLoad } from '../ui.jsx';
import { useVisibleInterval } from './live.jsx';

const refreshMs = 3000;

// groupKey is GroupKey2.getKey: '+' and '%' escaped, tenant only when set.
export function groupKey(dataId, group, tenant) {
  const esc = (s) => s.replace(/%/g, '%25').replace(/\+/g, '%2B');
  return esc(dataId) + '+' + esc(group) + (tenant ? '+' + esc(tenant) : '');
}

// serverMD5 asks what the server serves each {groupKey, ip}; tenant is the
// namespace the caller reads (with auth on it needs read access there and
// to every key asked about).
async function serverMD5(tenant, items) {
  if (!items.length) return [];
  return request('POST', 'v1/console/configs/md5', { query: { tenant }, json: items });
}

async function byConfig(ns, dataId, group) {
  const r = await get('v1/cs/configs/listener', { dataId, group, tenant: ns, sampleTime: 1 });
  const status = r.lisentersGroupkeyStatus || {};
  const gk = groupKey(dataId, group || 'DEFAULT_GROUP', ns);
  const ips = Object.keys(status).sort();
  const md5s = await serverMD5(ns, ips.map((ip) => ({ groupKey: gk, ip })));
  return ips.map((ip, i) => ({ ip, clientMd5: status[ip], serverMd5: md5s[i].md5 }));
}

async function byIP(ns, ip, all) {
  const r = await get('v1/cs/listener', { ip, tenant: ns, all: all ? 'true' : 'false', sampleTime: 1 });
  const status = r.lisentersGroupkeyStatus || {};
  const keys = Object.keys(status).sort();
  const md5s = await serverMD5(ns, keys.map((k) => ({ groupKey: k, ip })));
  return keys.map((k, i) => ({ ...md5s[i], clientMd5: status[k], serverMd5: md5s[i].md5 }));
}

function UpToDate({ r }) {
  return r.clientMd5 === r.serverMd5 ? <Badge kind="ok">up to date</Badge> : <Badge kind="warn">{r.serverMd5 ? 'stale' : 'config absent'}</Badge>;
}

export function Listeners({ q, ns }) {
  const by = q.by === 'ip' ? 'ip' : 'config';
  const [form, setForm] = useState({ dataId: q.dataId || '', group: q.group || '', ip: q.ip || '', all: q.all === 'true' });
  const [live, setLive] = useState(true);
  const ready = by === 'config' ? !!q.dataId : !!q.ip;
  const res = useLoad(() => (!ready ? null : by === 'config' ? byConfig(ns, q.dataId, q.group || '') : byIP(ns, q.ip, q.all === 'true')), [ns, by, q.dataId, q.group, q.ip, q.all]);
  useVisibleInterval(res.reload, refreshMs, live && ready);
  const rows = res.data || [];
  const submit = (e) => {
    e.preventDefault();
    replace('/listeners', by === 'config' ? { by, dataId: form.dataId, group: form.group } : { by, ip: form.ip, all: form.all ? 'true' : '' });
  };
  return (
    <section>
      <PageHead title="Listeners">
        <label class="inline"><input type="checkbox" checked={live} onChange={(e) => setLive(e.target.checked)} /> Live (every {refreshMs / 1000} s)</label>
      </PageHead>
      <div class="tabs" role="tablist">
        <a role="tab" aria-selected={by === 'config'} class={by === 'config' ? 'active' : ''} href={href('/listeners', { by: 'config' })}>By config</a>
        <a role="tab" aria-selected={by === 'ip'} class={by === 'ip' ? 'active' : ''} href={href('/listeners', { by: 'ip' })}>By client IP</a>
      </div>
      <form class="searchbar" role="search" onSubmit={submit}>
        {by === 'config' ? (
          <>
            <Field label="Data ID"><input required name="dataId" value={form.dataId} onInput={(e) => setForm({ ...form, dataId: e.target.value })} /></Field>
            <Field label="Group"><input name="group" value={form.group} placeholder="DEFAULT_GROUP" onInput={(e) => setForm({ ...form, group: e.target.value })} /></Field>
          </>
        ) : (
          <>
            <Field label="Client IP"><input required name="ip" value={form.ip} onInput={(e) => setForm({ ...form, ip: e.target.value })} /></Field>
            <label class="inline"><input type="checkbox" checked={form.all} onChange={(e) => setForm({ ...form, all: e.target.checked })} /> all namespaces</label>
          </>
        )}
        <button class="primary" type="submit">Query</button>
      </form>
      <ErrorBox error={res.error} retry={res.reload} />
      {!ready && <Empty>{by === 'config' ? 'Enter a config to see the clients listening to it now.' : 'Enter a client IP to see the configs it listens to now.'}</Empty>}
      {ready && res.data && (
        <div class="tablewrap">
          <table class="grid" data-testid="listeners">
            <thead>
              {by === 'config'
                ? <tr><th>Client IP</th><th>Client MD5</th><th>Server MD5</th><th>State</th></tr>
                : <tr><th>Data ID</th><th>Group</th><th>Namespace</th><th>Client MD5</th><th>Server MD5</th><th>State</th></tr>}
            </thead>
            <tbody>
              {rows.map((r) => by === 'config' ? (
                <tr><td>{r.ip}</td><td><code>{r.clientMd5 || '(none)'}</code></td><td><code>{r.serverMd5 || '(none)'}</code></td><td><UpToDate r={r} /></td></tr>
              ) : (
                <tr><td><a href={href('/configs/detail', { dataId: r.dataId, group: r.group })}>{r.dataId}</a></td><td>{r.group}</td><td>{r.tenant || 'public'}</td><td><code>{r.clientMd5 || '(none)'}</code></td><td><code>{r.serverMd5 || '(none)'}</code></td><td><UpToDate r={r} /></td></tr>
              ))}
            </tbody>
          </table>
          {!rows.length && <Empty>Nobody is listening right now (only clients holding a long poll are seen).</Empty>}
        </div>
      )}
    </section>
  );
}
