// Create or edit a config: editor with syntax highlighting and validation,
// a diff of the new content against the current one before every publish,
// beta (gray) publishing to chosen IPs and stopping the beta.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { del, get, post, restData } from '../api.js';
import { go, href } from '../router.js';
import { CodeEditor, DiffView, configTypes, validateContent } from '../code.jsx';
import { Dialog, ErrorBox, Field, PageHead, confirm, toast, useBusy, useLoad } from '../ui.jsx';

// loadConfig reads the full config (GET ?show=all); null when absent.
export async function loadConfig(ns, dataId, group) {
  const c = await get('v1/cs/configs', { show: 'all', dataId, group, tenant: ns });
  return c && typeof c === 'object' ? c : null;
}

export async function loadBeta(ns, dataId, group) {
  return restData(await get('v1/cs/configs', { beta: 'true', dataId, group, tenant: ns }));
}

// publish writes a config (POST /v1/cs/configs); betaIps makes it a beta.
export async function publish(ns, f, content, betaIps) {
  const form = { dataId: f.dataId, group: f.group, tenant: ns, content, type: f.type, appName: f.appName, desc: f.desc, config_tags: f.tags };
  const headers = betaIps ? { betaIps } : {};
  const r = await post('v1/cs/configs', form, { headers });
  if (r !== true) throw new Error('The server did not accept the config: ' + JSON.stringify(r));
}

export function PublishDialog({ title, original, modified, type, onCancel, onConfirm, confirmText = 'Publish', note }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  // a refused publish stays in the dialog, with the server's message
  const confirmIt = async () => {
    if (busy) return;
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={title} onClose={onCancel} wide footer={<>
      <button onClick={onCancel}>Back to editing</button>
      <button class="primary" id="confirm-publish" autofocus disabled={busy} onClick={confirmIt}>{confirmText}</button>
    </>}>
      <ErrorBox error={error} />
      {note && <p class="muted">{note}</p>}
      <DiffView original={original} modified={modified} type={type} />
    </Dialog>
  );
}

export function ConfigEdit({ q, ns }) {
  if (!q.new && q.dataId && !q.group) return <p class="alert error">No group named in the address. <a href={href('/configs')}>Pick the config from the list</a></p>;
  return <ConfigEditOf q={q} ns={ns} />;
}

function ConfigEditOf({ q, ns }) {
  const isNew = !!q.new || !q.dataId;
  const [f, setF] = useState({ dataId: q.dataId || '', group: q.group || 'DEFAULT_GROUP', desc: '', type: 'text', appName: '', tags: '', betaOn: false, betaIps: '' });
  const [invalid, setInvalid] = useState(null);
  const [diff, setDiff] = useState(null);
  const [busy, run] = useBusy();
  const ed = useRef();
  // bumped to put the loaded content back into the editor (after Stop beta)
  const [edGen, setEdGen] = useState(0);
  const cur = useLoad(async () => {
    if (isNew) return { config: null, beta: null };
    const [config, beta] = await Promise.all([loadConfig(ns, q.dataId, q.group), loadBeta(ns, q.dataId, q.group).catch(() => null)]);
    return { config, beta };
  }, [ns, q.dataId, q.group, isNew]);
  const c = cur.data && cur.data.config;
  const beta = cur.data && cur.data.beta;

  // The form takes the loaded fields in the same commit as the data, before
  // the next input event, so nothing typed after a reload is overwritten.
  useLayoutEffect(() => {
    if (!c) return;
    setF((x) => ({ ...x, desc: c.desc || '', type: configTypes.includes(c.type) ? c.type : 'text', appName: c.appName || '', tags: c.configTags || '', betaIps: beta ? beta.betaIps || '' : '' }));
  }, [c, beta]);

  const set = (k) => (e) => setF({ ...f, [k]: e.target.type === 'checkbox' ? e.target.checked : e.target.value });

  const [failure, setFailure] = useState(null);
  const startPublish = (e) => run(async () => {
    e && e.preventDefault();
    setFailure(null);
    try {
      await reviewChange();
    } catch (err) {
      setFailure(err); // next to the button, with the server's message
    }
  });
  const reviewChange = async () => {
    const content = ed.current ? ed.current.getValue() : '';
    if (!f.dataId.trim() || !f.group.trim()) throw new Error('Data ID and group are required');
    if (!content.trim()) throw new Error('Content must not be empty (Nacos rejects blank content)');
    if (f.betaOn && !f.betaIps.trim()) throw new Error('Enter the IPs that get the beta');
    const err = await validateContent(f.type, content);
    setInvalid(err);
    if (err) {
      toast(`Not published: ${err.message}${err.line ? ` (line ${err.line})` : ''}`, 'error');
      return;
    }
    // Compare with what is live now (re-read: someone may have changed it).
    const now = await loadConfig(ns, f.dataId, f.group);
    let original = now ? now.content : '';
    if (f.betaOn) {
      const b = await loadBeta(ns, f.dataId, f.group).catch(() => null);
      if (b) original = b.content;
    }
    if (isNew && now && !(await confirm(`A config ${f.dataId} in group ${f.group} already exists. Publishing replaces it. Continue?`, { okText: 'Continue' }))) return;
    setDiff({ original, modified: content, exists: !!now });
  };

  const doPublish = async () => {
    await publish(ns, f, diff.modified, f.betaOn ? f.betaIps.replace(/\s+/g, '') : '');
    // The dialog stays (busy) until the page shows what was published: typing
    // into a form that a late reload then resets would lose the input.
    if (!isNew) await cur.reload();
    setDiff(null);
    toast(f.betaOn ? `Beta published to ${f.betaIps}` : `Published ${f.dataId}`);
    if (isNew) go('/configs/edit', { dataId: f.dataId, group: f.group });
  };

  const stopBeta = () => run(async () => {
    if (!(await confirm(`Stop the beta of ${f.dataId}? The beta IPs get the main content again.`, { okText: 'Stop beta', danger: true }))) return;
    restData(await del('v1/cs/configs', { beta: 'true', dataId: f.dataId, group: f.group, tenant: ns }));
    toast('Beta stopped');
    await cur.reload();
    // the beta is over: the editor shows the content everyone gets again,
    // and the next publish is a normal one
    setF((x) => ({ ...x, betaOn: false, betaIps: '' }));
    setEdGen((g) => g + 1);
  });

  if (!isNew && cur.data && !c && !beta) {
    return <section><PageHead title="Edit config" /><p class="alert error">Config {q.dataId} ({q.group}) does not exist in this namespace. <a href={href('/configs/edit', { new: 1, dataId: q.dataId, group: q.group })}>Create it</a></p></section>;
  }
  const ready = isNew || cur.data;
  return (
    <section>
      <PageHead title={isNew ? 'New config' : `Edit ${q.dataId}`}>
        {!isNew && <a class="button" href={href('/configs/detail', { dataId: q.dataId, group: q.group })}>Detail</a>}
        {!isNew && <a class="button" href={href('/history', { dataId: q.dataId, group: q.group })}>History</a>}
        <a class="button" href={href('/configs')}>Back to list</a>
      </PageHead>
      <ErrorBox error={cur.error} retry={cur.reload} />
      {ready && (
        <form class="editform" onSubmit={startPublish}>
          <div class="cols">
            <Field label="Data ID"><input name="dataId" required readOnly={!isNew} value={f.dataId} onInput={set('dataId')} /></Field>
            <Field label="Group"><input name="group" required readOnly={!isNew} value={f.group} onInput={set('group')} /></Field>
            <Field label="App"><input name="appName" value={f.appName} onInput={set('appName')} /></Field>
            <Field label="Tags" hint="comma-separated, at most 5"><input name="tags" value={f.tags} onInput={set('tags')} /></Field>
          </div>
          <Field label="Description"><input name="desc" value={f.desc} onInput={set('desc')} maxLength={128} /></Field>
          <fieldset class="types">
            <legend>Format</legend>
            {configTypes.map((t) => (
              <label><input type="radio" name="type" value={t} checked={f.type === t} onChange={set('type')} /> {t.toUpperCase()}</label>
            ))}
          </fieldset>
          <CodeEditor key={(c ? c.md5 : 'new') + '|' + edGen} value={c ? c.content : ''} type={f.type} editorRef={ed} label={`Content of ${f.dataId || 'the new config'}`} />
          {invalid && <p class="alert error" role="alert">{invalid.message}{invalid.line ? ` (line ${invalid.line})` : ''}</p>}
          <fieldset class="beta">
            <legend>Beta (gray) release</legend>
            {beta && <p class="alert info">A beta is live for <strong>{beta.betaIps}</strong>. <button type="button" class="link danger" onClick={stopBeta}>Stop beta</button></p>}
            <label class="inline"><input type="checkbox" name="betaOn" checked={f.betaOn} onChange={set('betaOn')} /> Publish as beta, only to these client IPs</label>
            {f.betaOn && <Field label="Beta IPs" hint="comma-separated, e.g. 10.0.0.5,10.0.0.6"><input name="betaIps" value={f.betaIps} onInput={set('betaIps')} /></Field>}
          </fieldset>
          <ErrorBox error={failure} />
          <div class="buttons sticky">
            <a class="button" href={href('/configs')}>Cancel</a>
            <button class="primary" type="submit" id="publish" disabled={busy}>{f.betaOn ? 'Publish beta…' : 'Publish…'}</button>
          </div>
        </form>
      )}
      {diff && (
        <PublishDialog
          title={f.betaOn ? 'Review the beta before publishing' : diff.exists ? 'Review the change before publishing' : 'Review the new config'}
          note={diff.exists ? 'Left: content live now. Right: what you are about to publish.' : 'The config does not exist yet: everything on the right is new.'}
          original={diff.original} modified={diff.modified} type={f.type}
          onCancel={() => setDiff(null)} onConfirm={doPublish} confirmText={f.betaOn ? 'Publish beta' : 'Publish'} />
      )}
    </section>
  );
}
