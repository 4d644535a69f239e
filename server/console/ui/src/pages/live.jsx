// Live updates of naming data: a server-sent event stream of service
// changes (GET v1/console/events), calling onChange at most every minGapMs.
import { useEffect, useState } from 'preact/hooks';
import { url } from '../api.js';

export function useServiceEvents(params, onChange, minGapMs = 1000, enabled = true) {
  const [state, setState] = useState('connecting');
  const key = JSON.stringify(params);
  useEffect(() => {
    if (!enabled || typeof EventSource === 'undefined') { setState('off'); return; }
    let last = 0;
    let timer = null;
    const fire = () => {
      timer = null;
      last = Date.now();
      onChange();
    };
    const schedule = () => {
      if (timer) return;
      timer = setTimeout(fire, Math.max(0, last + minGapMs - Date.now()));
    };
    const es = new EventSource(url('v1/console/events', params));
    es.onopen = () => setState('live');
    es.onerror = () => setState('reconnecting');
    es.addEventListener('service', schedule);
    es.addEventListener('resync', schedule);
    return () => { es.close(); clearTimeout(timer); };
  }, [key, enabled]);
  return state;
}

export function LiveBadge({ state }) {
  const label = { live: 'live', connecting: 'connecting…', reconnecting: 'reconnecting…', off: 'not live' }[state] || state;
  return <span class={'live ' + state} title="Refreshes when the server reports a change">● {label}</span>;
}
