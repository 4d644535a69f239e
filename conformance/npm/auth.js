'use strict';
// npm `nacos` 2.6.x client scenarios with username/password against a server
// with nacos.core.auth.enabled=true (the conformance suite's auth runner).
// Usage: node auth.js <host:port> <namespace> <user> <password> <readUser> <readPassword> <badUser> <ttlSeconds> <scenario|all>...
// (the wrong-password scenario uses <badUser>, an existing user, with a wrong password)
// Each scenario prints one line: RESULT {"scenario":..,"ok":..,"ms":..,"detail":..}
//
// Run one scenario per process: nacos-config shares one client per process
// (cluster-client), so a second client there would talk with the first
// one's credentials, and closing it drops the shared leader.
//
// nacos 2.6.x never logs in: both clients send username and password as
// parameters of every request (the server checks them each time, as Java's
// NacosAuthManager does when no token is given), so a token expiry does not
// touch them; the expiry scenario shows that they keep working past it.

// nacos-naming sends clientIP = require('address').ip(): pin it to loopback.
const address = require(require.resolve('address', { paths: [ require.resolve('nacos-naming') ] }));
address.ip = () => '127.0.0.1';

const { NacosNamingClient, NacosConfigClient } = require('nacos');

const [ server, namespace, user, password, readUser, readPassword, badUser, ttlText ] = process.argv.slice(2, 10);
const ttl = Number(ttlText);
const run = (Date.now() % 1e9).toString(36);
const quiet = { info() {}, warn() {}, debug() {}, error() {}, log() {} };
const sleep = ms => new Promise(r => setTimeout(r, ms));
const clients = [];

async function eventually(timeoutMs, cond) {
  const start = Date.now();
  let last = 'never checked';
  for (;;) {
    try {
      last = await cond();
    } catch (e) {
      last = String(e);
    }
    if (last === null) return Date.now() - start;
    if (Date.now() - start > timeoutMs) throw new Error(`after ${Date.now() - start} ms: ${last}`);
    await sleep(200);
  }
}

async function naming(u, p, logger = quiet) {
  const c = new NacosNamingClient({ logger, serverList: server, namespace, username: u, password: p });
  await c.ready();
  clients.push(c);
  return c;
}

async function config(u, p) {
  const c = new NacosConfigClient({ serverAddr: server, namespace, username: u, password: p, requestTimeout: 10000 });
  await c.ready();
  clients.push(c);
  return c;
}

const id = base => `npm.auth.${base}.${run}`;

// A fresh client's first writes are retried for 20 s (a loaded server may
// time out; apps retry the same way).
async function retry(what, fn) {
  await eventually(20000, async () => {
    await fn();
    return null;
  }).catch(e => { throw new Error(what + ': ' + e.message); });
}

async function refused(what, fn) {
  try {
    const v = await fn();
    return `${what} answered ${JSON.stringify(v)}`;
  } catch (e) {
    const m = String(e && (e.body || e.message) || e);
    // 403 as Java; 429 once nacosd's login throttle locked the failing user out
    return /Status: (403|429)|code: (403|429)/.test(String(e && e.message)) || e.status === 403 || e.status === 429 ? null : `${what} failed without a 403: ${m}`;
  }
}

const scenarios = {
  async login() {
    const t0 = Date.now();
    const c = await config(user, password);
    const n = await naming(user, password);
    const ms = Date.now() - t0;
    const d = id('login');
    await retry('publishSingle', async () => { if (await c.publishSingle(d, 'DEFAULT_GROUP', 'v1') !== true) throw new Error('answered false'); });
    await eventually(5000, async () => ((await c.getConfig(d, 'DEFAULT_GROUP')) === 'v1' ? null : 'config not readable'));
    const s = id('login');
    await retry('registerInstance', () => n.registerInstance(s, { ip: '127.0.0.1', port: 21101 }));
    await eventually(5000, async () => ((await n.getAllInstances(s, 'DEFAULT_GROUP', '', false)).length === 1 ? null : 'instance not listed'));
    await n.deregisterInstance(s, { ip: '127.0.0.1', port: 21101 });
    await c.remove(d, 'DEFAULT_GROUP');
    return [ ms, 'clients ready; publish, read, register with username/password on each request' ];
  },
  async badpassword() {
    const c = await config(badUser, 'not-the-password');
    // the naming proxy reports each server's answer only to its logger
    const statuses = [];
    const n = await naming(badUser, 'not-the-password', { ...quiet, warn(e) { if (e && e.status) statuses.push(e.status); } });
    let why = await refused('publishSingle', () => c.publishSingle(id('bad'), 'DEFAULT_GROUP', 'x'));
    if (why) throw new Error('wrong password: ' + why);
    try {
      await n.registerInstance(id('bad'), { ip: '127.0.0.1', port: 21199, ephemeral: false });
      throw new Error('wrong password: registerInstance succeeded');
    } catch (e) {
      if (!statuses.includes(403) && !statuses.includes(429)) throw new Error('wrong password: registerInstance failed without a 403: ' + e.message + ' ' + JSON.stringify(statuses));
    }
    return [ -1, 'publish and register refused (403)' ];
  },
  async readonly() {
    // the harness published it (a second client here would share the
    // first one's credentials)
    const d = process.env.NPM_AUTH_RO_DATAID;
    const c = await config(readUser, readPassword);
    await eventually(5000, async () => ((await c.getConfig(d, 'DEFAULT_GROUP')) === 'visible' ? null : 'config not readable'));
    const why = await refused('publishSingle', () => c.publishSingle(d, 'DEFAULT_GROUP', 'x'));
    if (why) throw new Error('read-only user: ' + why);
    return [ -1, 'read allowed, publish refused' ];
  },
  async expiry() {
    const c = await config(user, password);
    const n = await naming(user, password);
    const sub = await naming(user, password);
    const d = id('exp');
    const kept = id('exp.kept');
    const watched = id('exp.watched');
    const changes = [];
    c.subscribe({ dataId: d, group: 'DEFAULT_GROUP' }, v => changes.push(v));
    // a subscriber is pushed to only when the service existed at its
    // query (Java), and the Node client ignores empty lists: one instance first
    await retry('registerInstance', () => n.registerInstance(watched, { ip: '127.0.0.1', port: 21104 }));
    await eventually(5000, async () => ((await n.getAllInstances(watched, 'DEFAULT_GROUP', '', false)).length === 1 ? null : 'watched not listed'));
    const events = [];
    sub.subscribe(watched, l => events.push(l));
    await retry('registerInstance', () => n.registerInstance(kept, { ip: '127.0.0.1', port: 21102 }));
    await retry('publish before', async () => { if (await c.publishSingle(d, 'DEFAULT_GROUP', 'before') !== true) throw new Error('answered false'); });
    await eventually(15000, async () => (changes.includes('before') ? null : 'listener got ' + JSON.stringify(changes)));
    const wait = ttl + 20;
    await sleep(wait * 1000);
    const t0 = Date.now();
    if (await c.publishSingle(d, 'DEFAULT_GROUP', 'after') !== true) throw new Error('publish after expiry failed');
    await eventually(15000, async () => (changes.includes('after') ? null : 'listener got ' + JSON.stringify(changes)));
    const l = await n.getAllInstances(kept, 'DEFAULT_GROUP', '', false);
    if (l.length !== 1 || !l[0].healthy) throw new Error('instance registered before expiry: ' + JSON.stringify(l));
    await n.registerInstance(watched, { ip: '127.0.0.1', port: 21103 });
    await eventually(15000, async () => (events.some(e => e.length === 2) ? null : 'events ' + events.length));
    const ms = Date.now() - t0;
    await n.deregisterInstance(kept, { ip: '127.0.0.1', port: 21102 });
    await n.deregisterInstance(watched, { ip: '127.0.0.1', port: 21103 });
    await n.deregisterInstance(watched, { ip: '127.0.0.1', port: 21104 });
    await c.remove(d, 'DEFAULT_GROUP');
    return [ ms, `writes, listener, subscription and beats work ${wait} s after the start (token ttl ${ttl} s)` ];
  },
};

function result(name, ok, ms, detail) {
  process.stdout.write('RESULT ' + JSON.stringify({ scenario: name, ok, ms, detail: String(detail || '').slice(0, 400) }) + '\n');
}

(async () => {
  let names = process.argv.slice(10);
  if (names.length === 0 || names.includes('all')) names = Object.keys(scenarios);
  for (const name of names) {
    const sc = scenarios[name];
    if (!sc) {
      result(name, false, -1, 'unknown scenario');
      continue;
    }
    try {
      const [ ms, detail ] = await sc();
      result(name, true, ms, detail);
    } catch (e) {
      result(name, false, -1, e && e.stack ? e.message : String(e));
    }
  }
  for (const c of clients) {
    try {
      c.close();
    } catch (e) {
      // best effort
    }
  }
  process.exit(0);
})();
