// Live updates of naming data: a server-sent event stream of service
// changes (GET v1/console/events), calling onChange at most every minGapMs.
//
// A browser keeps at most six HTTP/1.1 connections per server, and every
// open stream holds one. So the stream is open only while the tab is
// visible: a hidden tab closes it (and a page leaving for the back/forward
// cache too), and on coming back the page re-reads what it shows, then
// listens again. Ten console tabs in the background cost no connection.
import { useEffect, useRef, useState } from 'preact/hooks';
import { url } from '../api.js';
import { afterFirstData } from '../ui.jsx';

export function useServiceEvents(params, onChange, minGapMs = 1000, enabled = true) {
  const [state, setState] = useState('connecting');
  const key = JSON.stringify(params);
  const changed = useRef(onChange);
  changed.current = onChange;
  useEffect(() => {
    if (!enabled || typeof EventSource === 'undefined') { setState('off'); return; }
    let last = 0;
    let timer = null;
    let es = null;
    const fire = () => {
      timer = null;
      last = Date.now();
      changed.current();
    };
    const schedule = () => {
      if (timer) return;
      timer = setTimeout(fire, Math.max(0, last + minGapMs - Date.now()));
    };
    const open = () => {
      if (es) return;
      es = new EventSource(url('v1/console/events', params));
      es.onopen = () => setState('live');
      // a refused stream (401/403: a login that expired) is not retried
      es.onerror = () => setState(es && es.readyState === EventSource.CLOSED ? 'off' : 'reconnecting');
      es.addEventListener('service', schedule);
      es.addEventListener('resync', schedule);
    };
    const close = () => {
      if (es) es.close();
      es = null;
      clearTimeout(timer);
      timer = null;
    };
    const onVisibility = () => {
      if (document.visibilityState === 'hidden') {
        close();
        setState('paused');
      } else if (!es) {
        open();
        schedule(); // changes may have happened meanwhile
      }
    };
    const onHide = () => close();
    const onShow = (e) => { if (e.persisted) onVisibility(); };
    let alive = true;
    if (document.visibilityState !== 'hidden') afterFirstData(() => alive && !es && document.visibilityState !== 'hidden' && open());
    else setState('paused');
    document.addEventListener('visibilitychange', onVisibility);
    window.addEventListener('pagehide', onHide);
    window.addEventListener('pageshow', onShow);
    return () => {
      alive = false;
      close();
      document.removeEventListener('visibilitychange', onVisibility);
      window.removeEventListener('pagehide', onHide);
      window.removeEventListener('pageshow', onShow);
    };
  }, [key, enabled]);
  return state;
}

// useVisibleInterval calls fn every ms while the tab is visible (polling
// pages such as the listener queries), and once on becoming visible.
export function useVisibleInterval(fn, ms, enabled = true) {
  const f = useRef(fn);
  f.current = fn;
  useEffect(() => {
    if (!enabled) return;
    let t = null;
    const start = () => { if (!t) t = setInterval(() => f.current(), ms); };
    const stop = () => { clearInterval(t); t = null; };
    const onVisibility = () => {
      if (document.visibilityState === 'hidden') stop();
      else { f.current(); start(); }
    };
    if (document.visibilityState !== 'hidden') start();
    document.addEventListener('visibilitychange', onVisibility);
    return () => { stop(); document.removeEventListener('visibilitychange', onVisibility); };
  }, [ms, enabled]);
}

export function LiveBadge({ state }) {
  const label = { live: 'live', connecting: 'connecting…', reconnecting: 'reconnecting…', paused: 'paused (tab hidden)', off: 'not live' }[state] || state;
  return <span class={'live ' + state} role="status" title="Refreshes when the server reports a change">● {label}</span>;
}
