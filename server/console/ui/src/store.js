// Small global state: the current namespace and server info, with listeners.
import { useEffect, useState } from 'preact/hooks';
import { get, restData } from './api.js';

const listeners = new Set();
const state = {
  namespace: localStorage.getItem('nacosd.namespace') || '', // config tenant; '' is public
  namespaces: [],
  info: null,
};

export function getState() { return state; }

export function setState(patch) {
  Object.assign(state, patch);
  if ('namespace' in patch) localStorage.setItem('nacosd.namespace', patch.namespace);
  listeners.forEach((l) => l());
}

export function useStore() {
  const [, force] = useState(0);
  useEffect(() => {
    const l = () => force((n) => n + 1);
    listeners.add(l);
    return () => listeners.delete(l);
  }, []);
  return state;
}

// namingNs is the naming namespaceId of a config tenant ('' → public).
export const namingNs = (tenant) => tenant || 'public';

// loadNamespaces refreshes the namespace list (and drops a vanished current one).
export async function loadNamespaces() {
  const list = restData(await get('v1/console/namespaces'));
  setState({ namespaces: list || [] });
  const cur = state.namespace;
  if (cur && !(list || []).some((n) => n.namespace === cur)) setState({ namespace: '' });
  return list;
}

