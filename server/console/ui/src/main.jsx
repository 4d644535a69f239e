// nacosd console: app shell (header, navigation, namespace switcher) and routes.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import './app.css';
import { get, session, setLoginHandler } from './api.js';
import { go, href, isGlobal, replace, useRoute } from './router.js';
import { loadNamespaces, setState, useStore } from './store.js';
import { Catch, Dialog, ErrorBox, Toasts, afterFirstData, installKeys, labelTables, toast } from './ui.jsx';
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

// switchNamespace makes ns the console's namespace and writes it into the
// current route, so the address bar is a link to what is shown.
function switchNamespace(ns) {
  setState({ namespace: ns });
  const { path, q } = parseRoute();
  replace(path, { ...q, namespace: ns, tenant: undefined });
}

function parseRoute() {
  const h = location.hash.replace(/^#/, '') || '/';
  const i = h.indexOf('?');
  return { path: i < 0 ? h : h.slice(0, i), q: Object.fromEntries(new URLSearchParams(i < 0 ? '' : h.slice(i + 1))) };
}

function NamespaceSwitcher({ ns }) {
  const st = useStore();
  const list = st.namespaces.length ? st.namespaces : [{ namespace: '', namespaceShowName: 'public' }];
  const known = list.some((n) => n.namespace === ns);
  return (
    <label class="ns-switch">
      <span>Namespace</span>
      <select id="namespace" value={ns} onChange={(e) => switchNamespace(e.target.value)}>
        {list.map((n) => (
          <option value={n.namespace}>{n.namespaceShowName}{n.namespace ? ` (${n.namespace})` : ''}</option>
        ))}
        {!known && st.namespaces.length > 0 && <option value={ns}>{ns} (no such namespace)</option>}
      </select>
    </label>
  );
}

// javaRoutes maps the Java 1.4.8 console's routes (bookmarks, links in
// wikis) to this console's: [path, parameter renames].
const javaRoutes = {
  '/welcome': ['/configs', {}],
  '/configurationManagement': ['/configs', {}],
  '/newconfig': ['/configs/edit', {}],
  '/configeditor': ['/configs/edit', {}],
  '/configdetail': ['/configs/detail', {}],
  '/historyRollback': ['/history', { historyDataId: 'dataId', historyGroup: 'group' }],
  '/listeningToQuery': ['/listeners', { listeningDataId: 'dataId', listeningGroup: 'group' }],
  '/serviceManagement': ['/services', {}],
  '/serviceDetail': ['/services/detail', { groupName: 'group' }],
  '/subscriberList': ['/services/detail', { groupName: 'group' }],
  '/namespace': ['/namespaces', {}],
  '/clusterManagement': ['/cluster', {}],
  '/userManagement': ['/users', {}],
  '/rolesManagement': ['/roles', {}],
  '/permissionsManagement': ['/permissions', {}],
};

// canonicalRoute is where a route lands: the bare URL and Java's routes
// become this console's; null when the route is one already.
function canonicalRoute(path, q) {
  if (path === '/' || path === '') return { path: '/configs', q };
  const j = javaRoutes[path];
  if (!j) return null;
  const out = {};
  for (const [k, v] of Object.entries(q)) out[j[1][k] || k] = v;
  if (path === '/newconfig') out.new = '1';
  if (path === '/subscriberList') out.tab = 'subscribers';
  return { path: j[0], q: out };
}

function Header({ info, menu, onMenu, ns, onAbout }) {
  const s = session();
  return (
    <header class="top">
      <button class="icon menu" aria-label="Menu" aria-expanded={menu ? 'true' : 'false'} onClick={onMenu}>☰</button>
      <a class="brand" href={href('/configs')}>nacosd <small>{info ? info.version : ''}</small></a>
      <NamespaceSwitcher ns={ns} />
      <div class="user">
        <button class="link" onClick={onAbout}>About</button>
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

// About says which server this is: the Nacos API it speaks and the build
// of nacosd (version, commit and its time), as `nacosd version` does.
function About({ info, onClose }) {
  const b = info.build || {};
  const rows = [
    ['Nacos API', info.version],
    ['nacosd', b.version || 'unknown'],
    ['Commit', b.revision ? b.revision + (b.modified ? ' (with local changes)' : '') : 'unknown (built without VCS information)'],
    ['Commit time', b.revisionTime || 'unknown'],
    ['Go', b.go || 'unknown'],
    ['Mode', info.standalone ? 'standalone' : 'cluster'],
    ['Context path', info.contextPath || '/'],
  ];
  return (
    <Dialog title="About nacosd" onClose={onClose} footer={<button class="primary" autofocus onClick={onClose}>Close</button>}>
      <dl class="props" data-testid="about">
        {rows.map(([k, v]) => <><dt>{k}</dt><dd><code>{v}</code></dd></>)}
      </dl>
    </Dialog>
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
  const route = useRoute();
  const canon = canonicalRoute(route.path, route.q);
  const { path, q } = canon || route;
  const [info, setInfo] = useState(embeddedInfo);
  const [bootError, setBootError] = useState(null);
  const [menu, setMenu] = useState(false);
  const [about, setAbout] = useState(false);
  const st = useStore();
  // the namespace a link names (namespace=, or tenant= as in the API) wins
  // over the one remembered from the last visit
  const linkNs = q.namespace !== undefined ? q.namespace : q.tenant;
  const ns = linkNs !== undefined ? linkNs : st.namespace;
  const needLogin = !!info && path !== '/login' && info.authEnabled && !session();

  // Navigation happens after the render, never during it: the route's
  // hashchange listener exists by then (a navigation during the first
  // render went unseen and left the page empty).
  useEffect(() => {
    if (location.hash !== route.hash) return; // a newer navigation is on its way
    if (linkNs !== undefined && linkNs !== st.namespace) setState({ namespace: linkNs });
    if (needLogin) {
      go('/login', { next: href(path, { ...q, namespace: ns }).slice(1) });
    } else if (canon || (linkNs === undefined && !isGlobal(path))) {
      // the address bar shows the canonical route with its namespace
      replace(path, { ...q, namespace: ns, tenant: undefined });
    }
  });

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
    if (!info || path === '/login' || needLogin) return;
    afterFirstData(() => loadNamespaces().then(() => setBootError(null), setBootError));
  }, [info, path === '/login']);

  if (!info) return <p class="boot">Loading…</p>;
  if (path === '/login') return <><Login info={st.info || info} next={q.next} why={q.why} /><Toasts /></>;
  if (needLogin) return <p class="boot">Loading…</p>; // the effect above goes to the login
  const Page = routes[path];
  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main').focus(); }}>Skip to content</a>
      <Header info={info} menu={menu} onMenu={() => setMenu(!menu)} ns={ns} onAbout={() => setAbout(true)} />
      <Nav path={path} open={menu} info={info} onPick={() => setMenu(false)} />
      <main id="main" tabIndex={-1}>
        <DefaultPasswordBanner info={st.info || info} />
        <ErrorBox error={bootError} />
        {Page ? <Catch key={path + '|' + ns}><Page q={q} ns={ns} /></Catch> : <p class="alert error">No such page: {path}. <a href={href('/configs')}>Go to configs</a></p>}
      </main>
      {about && <About info={info} onClose={() => setAbout(false)} />}
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
