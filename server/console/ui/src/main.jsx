// nacosd console: app shell (header, navigation, namespace switcher) and routes.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './app.css';
import { get, session, setLoginHandler } from './api.js';
import { go, href, useRoute } from './router.js';
import { loadNamespaces, setState, useStore } from './store.js';
import { ErrorBox, Toasts, toast } from './ui.jsx';
import { Login, logout } from './pages/login.jsx';
import { Configs } from './pages/configs.jsx';
import { ConfigEdit } from './pages/configedit.jsx';
import { ConfigDetail } from './pages/configdetail.jsx';
import { History } from './pages/history.jsx';
import { Listeners } from './pages/listeners.jsx';
import { Services } from './pages/services.jsx';
import { ServiceDetail } from './pages/servicedetail.jsx';
import { Namespaces } from './pages/namespaces.jsx';
import { Cluster } from './pages/cluster.jsx';
import { Users, Roles, Permissions } from './pages/access.jsx';

const nav = [
  ['Configuration', [['/configs', 'Configs'], ['/history', 'History'], ['/listeners', 'Listeners']]],
  ['Service discovery', [['/services', 'Services']]],
  ['Namespaces', [['/namespaces', 'Namespaces']]],
  ['Cluster', [['/cluster', 'Nodes']]],
  ['Access control', [['/users', 'Users'], ['/roles', 'Roles'], ['/permissions', 'Permissions']]],
];

const routes = {
  '/configs': Configs,
  '/configs/edit': ConfigEdit,
  '/configs/detail': ConfigDetail,
  '/history': History,
  '/listeners': Listeners,
  '/services': Services,
  '/services/detail': ServiceDetail,
  '/namespaces': Namespaces,
  '/cluster': Cluster,
  '/users': Users,
  '/roles': Roles,
  '/permissions': Permissions,
};

function NamespaceSwitcher() {
  const st = useStore();
  return (
    <label class="ns-switch">
      <span>Namespace</span>
      <select id="namespace" value={st.namespace} onChange={(e) => setState({ namespace: e.target.value })}>
        {(st.namespaces.length ? st.namespaces : [{ namespace: '', namespaceShowName: 'public' }]).map((n) => (
          <option value={n.namespace}>{n.namespaceShowName}{n.namespace ? ` (${n.namespace})` : ''}</option>
        ))}
      </select>
    </label>
  );
}

function Header({ info, onMenu }) {
  const s = session();
  return (
    <header class="top">
      <button class="icon menu" aria-label="Menu" onClick={onMenu}>☰</button>
      <a class="brand" href="#/configs">nacosd <small>{info ? info.version : ''}</small></a>
      <NamespaceSwitcher />
      <div class="user">
        {info && !info.authEnabled && <span class="muted small" title="nacos.core.auth.enabled=false">auth off</span>}
        {s ? (
          <>
            <span class="who">{s.username}</span>
            <button class="link" onClick={logout}>Log out</button>
          </>
        ) : (
          <a href="#/login">Log in</a>
        )}
      </div>
    </header>
  );
}

function Nav({ path, open, onPick }) {
  return (
    <nav class={'side' + (open ? ' open' : '')} aria-label="Main">
      {nav.map(([title, items]) => (
        <div class="navgroup">
          <div class="navtitle">{title}</div>
          {items.map(([p, label]) => (
            <a href={href(p)} class={path === p || path.startsWith(p + '/') ? 'active' : ''} aria-current={path === p ? 'page' : undefined} onClick={onPick}>{label}</a>
          ))}
        </div>
      ))}
    </nav>
  );
}

// embeddedInfo is the server's ui/info carried by the page (no round trip
// before the first screen); null when the page has none.
function embeddedInfo() {
  try {
    const i = JSON.parse(document.getElementById('nacosd-info').textContent);
    return i && 'authEnabled' in i ? i : null;
  } catch {
    return null;
  }
}

function App() {
  const { path, q } = useRoute();
  const [info, setInfo] = useState(embeddedInfo);
  const [bootError, setBootError] = useState(null);
  const [menu, setMenu] = useState(false);
  const st = useStore();

  useEffect(() => {
    setLoginHandler((msg) => {
      localStorage.removeItem('token');
      if (location.hash.startsWith('#/login')) return;
      toast(`Please log in (${msg})`, 'error');
      go('/login', { next: location.hash.slice(1) });
    });
    const known = embeddedInfo();
    (known ? Promise.resolve(known) : get('v1/console/ui/info'))
      .catch(() => ({ version: '', authEnabled: true })) // an older server: assume auth
      .then((i) => {
        setInfo(i);
        setState({ info: i });
      });
  }, []);

  useEffect(() => {
    if (!info || path === '/login' || (info.authEnabled && !session())) return;
    loadNamespaces().then(() => setBootError(null), setBootError);
  }, [info, path === '/login']);

  if (!info) return <p class="boot">Loading…</p>;
  if (path === '/login') return <><Login info={info} next={q.next} /><Toasts /></>;
  if (info.authEnabled && !session()) {
    go('/login', { next: location.hash.slice(1) });
    return null;
  }
  if (path === '/' || path === '') {
    go('/configs');
    return null;
  }
  const Page = routes[path];
  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main').focus(); }}>Skip to content</a>
      <Header info={info} onMenu={() => setMenu(!menu)} />
      <Nav path={path} open={menu} onPick={() => setMenu(false)} />
      <main id="main" tabIndex={-1}>
        <ErrorBox error={bootError} />
        {Page ? <Page q={q} ns={st.namespace} key={path + '|' + st.namespace} /> : <p>No such page: {path}. <a href="#/configs">Go to configs</a></p>}
      </main>
      <Toasts />
    </div>
  );
}

window.addEventListener('unhandledrejection', (e) => toast(e.reason && e.reason.message ? e.reason.message : String(e.reason), 'error'));
render(<App />, document.getElementById('app'));
