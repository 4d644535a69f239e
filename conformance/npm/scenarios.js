'use strict';
// npm `nacos` 2.6.x client scenarios for the nacosd conformance suite.
// Usage: node scenarios.js <host:port> <scenario|all>...
// Each scenario prints one line: RESULT {"scenario":..,"ok":..,"ms":..,"detail":..}

// nacos-naming sends clientIP = require('address').ip(), this machine's
// interface address, and the server pushes there. Pin it to loopback before
// nacos-naming loads so that all traffic stays on 127.0.0.1.
const address = require(require.resolve('address', { paths: [ require.resolve('nacos-naming') ] }));
address.ip = () => '127.0.0.1';

const { NacosNamingClient, NacosConfigClient } = require('nacos');

const server = process.argv[2];
const run = (Date.now() % 1e9).toString(36);
const quiet = { info() {}, warn() {}, debug() {}, error() {}, log() {} };
const sleep = ms => new Promise(r => setTimeout(r, ms));

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
    await sleep(100);
  }
}

// readable polls getConfig every 10 ms until it equals want (null: absent,
// which the client reports as null, undefined or '').
async function readable(c, id, want, timeoutMs = 10000) {
  const start = Date.now();
  for (;;) {
    let got;
    try {
      got = await c.getConfig(id, 'DEFAULT_GROUP');
    } catch (e) {
      got = '<' + String(e && e.message || e) + '>';
    }
    const absent = got === null || got === undefined || got === '';
    if (want === null ? absent : got === want) return Date.now() - start;
    if (Date.now() - start > timeoutMs) throw new Error(`${id} after ${Date.now() - start} ms: got ${JSON.stringify(got)}`);
    await sleep(10);
  }
}

const clients = [];
async function naming() {
  const c = new NacosNamingClient({ logger: quiet, serverList: server, namespace: 'public' });
  await c.ready();
  clients.push(c);
  return c;
}
async function config() {
  const c = new NacosConfigClient({ serverAddr: server, requestTimeout: 6000 });
  await c.ready();
  clients.push(c);
  return c;
}
const svc = base => `npm.${base}.${run}`;
const hosts = l => JSON.stringify(l.map(h => `${h.ip}:${h.port}/${h.healthy}`));

const scenarios = {
  async 'naming.register'() {
    const c = await naming();
    const s = svc('reg');
    const t0 = Date.now();
    await c.registerInstance(s, { ip: '127.0.0.1', port: 21001, metadata: { v: '1' } });
    const ms = Date.now() - t0;
    await eventually(5000, async () => {
      const l = await c.getAllInstances(s, 'DEFAULT_GROUP', '', false);
      return l.length === 1 && l[0].port === 21001 && l[0].metadata.v === '1' ? null : 'instances ' + hosts(l);
    });
    // The Node client ignores an empty host list (ServiceInfo.isValid) and keeps
    // its cached one, so removal is checked with a second instance left behind.
    await c.registerInstance(s, { ip: '127.0.0.1', port: 21006 });
    await c.deregisterInstance(s, { ip: '127.0.0.1', port: 21001 });
    await eventually(5000, async () => {
      const l = await c.getAllInstances(s, 'DEFAULT_GROUP', '', false);
      return l.length === 1 && l[0].port === 21006 ? null : 'instances ' + hosts(l);
    });
    return [ ms, 'register latency' ];
  },
  async 'naming.push.add'() {
    const sub = await naming();
    const reg = await naming();
    const s = svc('padd');
    await reg.registerInstance(s, { ip: '127.0.0.1', port: 21002 });
    const events = [];
    sub.subscribe(s, l => events.push(l));
    await eventually(5000, async () => (events.some(l => l.length === 1) ? null : 'no first event'));
    await sleep(1500);
    events.length = 0;
    const t0 = Date.now();
    await reg.registerInstance(s, { ip: '127.0.0.1', port: 21003 });
    await eventually(15000, async () => (events.some(l => l.length === 2) ? null : 'events ' + events.length));
    const ms = Date.now() - t0;
    if (ms > 5000) throw new Error(`event after ${ms} ms (poll, not push?)`);
    return [ ms, 'register to listener' ];
  },
  async 'naming.push.remove'() {
    const sub = await naming();
    const reg = await naming();
    const s = svc('prm');
    await reg.registerInstance(s, { ip: '127.0.0.1', port: 21004 });
    await reg.registerInstance(s, { ip: '127.0.0.1', port: 21005 });
    const events = [];
    sub.subscribe(s, l => events.push(l));
    await eventually(5000, async () => (events.some(l => l.length === 2) ? null : 'no event with 2'));
    await sleep(1500);
    events.length = 0;
    const t0 = Date.now();
    await reg.deregisterInstance(s, { ip: '127.0.0.1', port: 21005 });
    await eventually(15000, async () => (events.some(l => l.length === 1 && l[0].port === 21004) ? null : 'events ' + events.length));
    const ms = Date.now() - t0;
    if (ms > 5000) throw new Error(`event after ${ms} ms (poll, not push?)`);
    return [ ms, 'deregister to listener' ];
  },
  async 'config.publish.get'() {
    const c = await config();
    const id = `npm.pg.${run}`;
    const t0 = Date.now();
    const ok = await c.publishSingle(id, 'DEFAULT_GROUP', 'a=1\nb=2');
    const pub = Date.now() - t0;
    if (!ok) throw new Error('publish returned ' + ok);
    // Java 1.4.8 serves reads from a dump written after the commit: an app
    // reading its own write polls (bounded), as here.
    await readable(c, id, 'a=1\nb=2');
    const ms = Date.now() - t0;
    return [ ms, `publish ${pub} ms, readable ${ms} ms after the publish began` ];
  },
  async 'config.listener'() {
    const c = await config();
    const p = await config();
    const id = `npm.lis.${run}`;
    await p.publishSingle(id, 'DEFAULT_GROUP', 'v0');
    const got = [];
    c.subscribe({ dataId: id, group: 'DEFAULT_GROUP' }, content => got.push(content));
    await eventually(5000, async () => (got.includes('v0') ? null : 'no initial content'));
    await sleep(1500);
    const t0 = Date.now();
    await p.publishSingle(id, 'DEFAULT_GROUP', 'v1');
    await eventually(35000, async () => (got.includes('v1') ? null : 'got ' + JSON.stringify(got)));
    const ms = Date.now() - t0;
    if (ms > 5000) // held long poll woken at once, not the 30 s cycle
      throw new Error(`listener woken after ${ms} ms`);
    return [ ms, 'publish to listener' ];
  },
  async 'config.remove'() {
    const c = await config();
    const id = `npm.rm.${run}`;
    await c.publishSingle(id, 'DEFAULT_GROUP', 'x');
    await readable(c, id, 'x');
    const t0 = Date.now();
    const ok = await c.remove(id, 'DEFAULT_GROUP');
    const rm = Date.now() - t0;
    if (!ok) throw new Error('remove returned ' + ok);
    await readable(c, id, null);
    const ms = Date.now() - t0;
    return [ ms, `remove ${rm} ms, gone ${ms} ms after the remove began` ];
  },
};

function result(name, ok, ms, detail) {
  process.stdout.write('RESULT ' + JSON.stringify({ scenario: name, ok, ms, detail }) + '\n');
}

async function main() {
  let names = process.argv.slice(3);
  if (names.includes('all')) names = Object.keys(scenarios);
  for (const n of names) {
    const sc = scenarios[n];
    if (!sc) {
      result(n, false, -1, 'unknown scenario');
      continue;
    }
    try {
      const [ ms, detail ] = await Promise.race([
        sc(),
        sleep(60000).then(() => { throw new Error('scenario timed out after 60 s'); }),
      ]);
      result(n, true, ms, detail);
    } catch (e) {
      result(n, false, -1, String(e && e.message || e));
    }
  }
  for (const c of clients) {
    try { c.close(); } catch (e) { /* best effort */ }
  }
  process.exit(0);
}

main();
