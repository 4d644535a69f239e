// nacosd console: app shell (header, navigation, namespace switcher) and routes.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './app.css';
import { get, session, setLoginHandler } from './api.js';
import { go, href, useRoute } from './router.js';
import { loadNamespaces, setState, useStore } from './store.js';
import { Catch, ErrorBox, Toasts, afterFirstData, installKeys, labelTables, toast } from './ui.jsx';
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

function Header({ info, menu, onMenu }) {
  const s = session();
  return (
    <header class="top">
      <button class="icon menu" aria-label="Menu" aria-expanded={menu ? 'true' : 'false'} onClick={onMenu}>☰</button>
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

// DefaultPasswordBanner warns while the built-in admin still has the
// published password (ui/info's defaultAdminPassword; the server also
// logs it and exports nacosd_auth_default_admin_password).
// Shown to admins (and on the login page): other users can do nothing
// about it.
function DefaultPasswordBanner({ info, link = true }) {
  const s = session();
  if (!info || !info.defaultAdminPassword || (s && s.globalAdmin === false)) return null;
  return (
    <p class="alert banner" role="alert" id="default-password-banner">
      User <strong>nacos</strong> still has the default password <code>nacos</code>: anyone can log in as admin.{' '}
      {link ? <>Change it on the <a href={href('/users')}>Users</a> page</> : 'Change it after logging in'}, or start nacosd
      with <code>nacosd.auth.admin-password</code>.
    </p>
  );
}

// navFor drops the access-control pages for a user who is not an admin
// when auth is on (the server would refuse every call of them). With auth
// off they stay: they need an admin login even then, and ask for it.
function navFor(info) {
  const s = session();
  if (info && info.authEnabled && s && s.globalAdmin === false) return nav.filter(([t]) => t !== 'Access control');
  return nav;
}

function Nav({ path, open, onPick, info }) {
  return (
    <nav class={'side' + (open ? ' open' : '')} aria-label="Main">
      {navFor(info).map(([title, items]) => (
        <div class="navgroup">
          <div class="navtitle">{title}</div>
          {items.map(([p, label]) => (
            <a href={href(p)} class={path === p || path.startsWith(p + '/') ? 'active' : ''} aria-current={path === p ? 'page' : undefined} onClick={onPick}>{label}</a>
          ))}
        </div>
      ))}
      <p class="navfoot muted small">Press <kbd>?</kbd> for keys</p>
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
      go('/login', { next: location.hash.slice(1), why: msg });
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
    afterFirstData(() => loadNamespaces().then(() => setBootError(null), setBootError));
  }, [info, path === '/login']);

  if (!info) return <p class="boot">Loading…</p>;
  if (path === '/login') return <><Login info={st.info || info} next={q.next} why={q.why} /><Toasts /></>;
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
      <Header info={info} menu={menu} onMenu={() => setMenu(!menu)} />
      <Nav path={path} open={menu} info={info} onPick={() => setMenu(false)} />
      <main id="main" tabIndex={-1}>
        <DefaultPasswordBanner info={st.info || info} />
        <ErrorBox error={bootError} />
        {Page ? <Catch key={path + '|' + st.namespace}><Page q={q} ns={st.namespace} /></Catch> : <p class="alert error">No such page: {path}. <a href="#/configs">Go to configs</a></p>}
      </main>
      <Toasts />
    </div>
  );
}

window.addEventListener('unhandledrejection', (e) => toast(e.reason && e.reason.message ? e.reason.message : String(e.reason), 'error'));
installKeys();
// The app renders into a hidden element under the "Loading…" of
// index.html, which is swapped for it once the page shows its first data
// (or after 150 ms): the first screen is laid out and painted once, with
// its data, instead of an empty table first (which, on a busy machine,
// delays the data by a whole extra frame).
const root = document.getElementById('app');
const host = document.createElement('div');
host.hidden = true;
root.appendChild(host);
labelTables(host);
render(<App />, host);
afterFirstData(() => {
  for (const n of [...root.childNodes]) if (n !== host) n.remove();
  host.hidden = false;
}, 150);
