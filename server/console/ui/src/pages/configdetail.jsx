import { del } from '../api.js';
import { go, href } from '../router.js';
import { CodeEditor } from '../code.jsx';
import { ErrorBox, PageHead, confirm, fmtTime, toast, useBusy, useLoad } from '../ui.jsx';
import { loadBeta, loadConfig } from './configedit.jsx';

export function ConfigDetail({ q, ns }) {
  if (!q.dataId || !q.group) return <p class="alert error">No config (data ID and group) named in the address. <a href="#/configs">Pick one from the list</a></p>;
  return <ConfigDetailOf q={q} ns={ns} />;
}

function ConfigDetailOf({ q, ns }) {
  const [busy, run] = useBusy();
  const d = useLoad(async () => {
    const [config, beta] = await Promise.all([loadConfig(ns, q.dataId, q.group), loadBeta(ns, q.dataId, q.group).catch(() => null)]);
    return { config, beta };
  }, [ns, q.dataId, q.group]);
  const c = d.data && d.data.config;
  const beta = d.data && d.data.beta;
  const key = { dataId: q.dataId, group: q.group };
  const remove = () => run(async () => {
    if (!(await confirm(`Delete config ${q.dataId} (group ${q.group})?`, { okText: 'Delete', danger: true }))) return;
    await del('v1/cs/configs', { ...key, tenant: ns });
    toast(`Deleted ${q.dataId}`);
    go('/configs');
  });
  return (
    <section>
      <PageHead title={`Config ${q.dataId || ''}`}>
        <a class="button primary" href={href('/configs/edit', key)}>Edit</a>
        <a class="button" href={href('/history', key)}>History</a>
        <a class="button" href={href('/listeners', { ...key, by: 'config' })}>Listeners</a>
        <button class="danger" disabled={busy || !c} onClick={remove}>Delete</button>
      </PageHead>
      <ErrorBox error={d.error} retry={d.reload} />
      {d.data && !c && <p class="alert error">This config does not exist in the current namespace.</p>}
      {c && (
        <>
          <dl class="props">
            <dt>Data ID</dt><dd>{c.dataId}</dd>
            <dt>Group</dt><dd>{c.group}</dd>
            <dt>Namespace</dt><dd>{c.tenant || 'public'}</dd>
            <dt>App</dt><dd>{c.appName || '—'}</dd>
            <dt>Format</dt><dd>{c.type || 'text'}</dd>
            <dt>MD5</dt><dd><code data-testid="md5">{c.md5}</code></dd>
            <dt>Tags</dt><dd>{c.configTags || '—'}</dd>
            <dt>Description</dt><dd>{c.desc || '—'}</dd>
            <dt>Last modified</dt><dd>{fmtTime(c.modifyTime)}</dd>
            <dt>Last modified by</dt><dd>{c.createUser || '(unknown user)'} from {c.createIp || '(unknown address)'}</dd>
          </dl>
          {beta && <p class="alert info">Beta live for {beta.betaIps}. <a href={href('/configs/edit', key)}>Manage in the editor</a></p>}
          <h2>Content</h2>
          <CodeEditor key={c.md5} value={c.content} type={c.type} readOnly label="Config content (read only)" />
        </>
      )}
    </section>
  );
}
