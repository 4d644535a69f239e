// Cluster nodes: state, raft role, version, last refresh. Columns are
// declared once; a column is shown when any node has its field, so fields
// that cluster mode adds (Distro, checksum health) need one line here.
import { get, restData } from '../api.js';
import { useState } from 'preact/hooks';
import { replace } from '../router.js';
import { Badge, ErrorBox, Field, PageHead, fmtTime, useLoad } from '../ui.jsx';
import { useVisibleInterval } from './live.jsx';

const stateKind = { UP: 'ok', DOWN: 'bad', SUSPICIOUS: 'warn', STARTING: 'warn', ISOLATION: 'bad' };

const columns = [
  ['address', 'Address', (n) => <>{n.address}{n.self ? <Badge>this node</Badge> : ''}</>],
  ['state', 'State', (n) => <Badge kind={stateKind[n.state]}>{n.state}</Badge>],
  ['raftRole', 'Raft role', (n) => n.raftRole],
  ['version', 'Version', (n) => n.version],
  ['lastRefreshTime', 'Last refresh', (n) => fmtTime(n.lastRefreshTime)],
  ['distroRole', 'Distro', (n) => n.distroRole],
  ['checksumHealth', 'Checksum health', (n) => n.checksumHealth],
];

// fromCore adapts /v1/core/cluster/nodes (servers without the console API).
const fromCore = (m) => ({ ...m, version: m.extendInfo.version, lastRefreshTime: m.extendInfo.lastRefreshTime, raftPort: m.extendInfo.raftPort });

async function load() {
  try {
    return await get('v1/console/cluster/nodes');
  } catch (e) {
    if (e.status !== 404) throw e;
    return { nodes: restData(await get('v1/core/cluster/nodes')).map(fromCore) };
  }
}

export function Cluster({ q }) {
  const d = useLoad(load, []);
  const [filter, setFilter] = useState(q.ip || '');
  useVisibleInterval(d.reload, 5000);
  const all = (d.data && d.data.nodes) || [];
  const nodes = all.filter((n) => !q.ip || n.address.includes(q.ip));
  const cols = columns.filter(([k]) => nodes.some((n) => n[k] !== undefined && n[k] !== ''));
  return (
    <section>
      <PageHead title="Cluster nodes">
        {d.data && <span class="muted">{d.data.standalone ? 'standalone mode' : 'cluster mode'}{d.data.raft && d.data.raft.term ? `, raft term ${d.data.raft.term}, applied index ${d.data.raft.appliedIndex}` : ''}</span>}
        <button onClick={d.reload}>Refresh</button>
      </PageHead>
      <form class="searchbar" role="search" onSubmit={(e) => { e.preventDefault(); replace('/cluster', { ip: filter.trim() }); }}>
        <Field label="Node address"><input name="ip" value={filter} placeholder="contains" onInput={(e) => setFilter(e.target.value)} /></Field>
        <button class="primary" type="submit">Filter</button>
        <span class="muted small">{nodes.length} of {all.length} nodes</span>
      </form>
      <ErrorBox error={d.error} retry={d.reload} />
      <div class="tablewrap">
        <table class="grid" data-testid="nodes">
          <thead><tr>{cols.map(([, t]) => <th>{t}</th>)}<th>Details</th></tr></thead>
          <tbody>
            {nodes.map((n) => (
              <tr key={n.address}>
                {cols.map(([k, , f]) => <td data-col={k}>{f(n)}</td>)}
                <td><details><summary>extendInfo</summary><pre class="small">{JSON.stringify(n.extendInfo, null, 2)}</pre></details></td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
