"""nacos-sdk-python 2.x scenarios (its v2.nacos API: gRPC to the HTTP port + 1000) for the
conformance suite's 2.x axis (docs/conformance.md).

Usage: python scenarios.py <host:port[,...]> <workdir> [auth|scenario...]
Each scenario prints one line RESULT {"scenario":..,"ok":..,"ms":..,"detail":..} on stdout (the
protocol of javatest/client). With auth, NACOS_USERNAME and NACOS_PASSWORD log the clients in.
"""

import asyncio
import json
import logging
import os
import sys
import time
import urllib.parse
import urllib.request

from v2.nacos import (ClientConfigBuilder, ConfigParam, DeregisterInstanceParam, ListInstanceParam,
                      ListServiceParam, NacosConfigService, NacosNamingService, RegisterInstanceParam,
                      SubscribeServiceParam)

SERVER = sys.argv[1]
WORK = sys.argv[2]
RUN = format(int(time.time() * 1000) % 1_000_000_000, "x")
GROUP = "GPY"


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def result(name, ok, ms, detail):
    print("RESULT " + json.dumps({"scenario": name, "ok": ok, "ms": ms, "detail": detail}, ensure_ascii=False),
          flush=True)


class Clients:
    """Creates clients and shuts them all down after a scenario."""

    def __init__(self):
        self.open = []

    def config(self, namespace=None, role="main"):
        b = ClientConfigBuilder().server_address(SERVER)
        if namespace is not None:
            b = b.namespace_id(namespace)
        b = (b.log_level(logging.WARNING).log_dir(os.path.join(WORK, "log-" + role))
             .cache_dir(os.path.join(WORK, "cache-" + role)).timeout_ms(5000))
        user = os.environ.get("NACOS_USERNAME", "")
        if user:
            b = b.username(user).password(os.environ.get("NACOS_PASSWORD", ""))
        cfg = b.build()
        cfg.update_cache_when_empty = True  # else a pushed empty list is ignored
        cfg.load_cache_at_start = False
        return cfg

    async def naming(self, namespace=None, role="main"):
        n = await NacosNamingService.create_naming_service(self.config(namespace, role))
        self.open.append(n)
        return n

    async def configs(self, namespace=None, role="main"):
        c = await NacosConfigService.create_config_service(self.config(namespace, role))
        self.open.append(c)
        return c

    async def close(self):
        for c in self.open:
            try:
                # a config client's shutdown waits out its 5 s listen loop: its
                # connection is closed by then, what remains ends with the process
                await asyncio.wait_for(c.shutdown(), 1)
            except Exception:
                pass
        self.open = []


def addrs(hosts):
    return sorted(f"{h.ip}:{h.port}" for h in hosts)


async def until(cond, timeout=5.0):
    """Awaits cond() until it returns something true; returns the last value."""
    end = time.monotonic() + timeout
    v = None
    while time.monotonic() < end:
        try:
            v = await cond()
            if v:
                return v
        except Exception as e:  # the server may not answer yet
            v = e
        await asyncio.sleep(0.1)
    return v


def reg(svc, port, **kw):
    return RegisterInstanceParam(service_name=svc, group_name=GROUP, ip="127.0.0.1", port=port, **kw)


def v1_list(svc, namespace=""):
    host = SERVER.split(",")[0]
    params = {"serviceName": GROUP + "@@" + svc}
    if namespace:
        params["namespaceId"] = namespace
    q = urllib.parse.urlencode(params)
    with urllib.request.urlopen(f"http://{host}/nacos/v1/ns/instance/list?{q}", timeout=5) as r:
        return r.read().decode()


async def naming_register(cl):
    # namespace "public" given: the SDK's default namespace id is "", which Java Nacos 2.5.1 keeps
    # apart from "public", where the 1.x API and the Java clients look
    n = await cl.naming(namespace="public")
    svc = "reg-" + RUN
    t0 = time.monotonic()
    ok = await n.register_instance(reg(svc, 18201, weight=2.5, metadata={"k": "v", "zh": "中文"}))
    ms = int((time.monotonic() - t0) * 1000)
    check(ok, "register returned false")

    async def listed():
        hosts = await n.list_instances(ListInstanceParam(service_name=svc, group_name=GROUP, subscribe=False,
                                                         healthy_only=None))
        return hosts if addrs(hosts) == ["127.0.0.1:18201"] else None

    hosts = await until(listed)
    check(isinstance(hosts, list), f"after register: {hosts}")
    h = hosts[0]
    check(h.weight == 2.5 and h.metadata.get("zh") == "中文" and h.healthy, f"instance {h}")
    async def v1_listed():  # another member of a cluster: after the Distro sync
        b = v1_list(svc)
        return b if '"port":18201' in b else None

    body = await until(v1_listed)
    check(isinstance(body, str), f"the 1.x API does not list it: {v1_list(svc)}")
    ok = await n.deregister_instance(DeregisterInstanceParam(service_name=svc, group_name=GROUP, ip="127.0.0.1",
                                                             port=18201))
    check(ok, "deregister returned false")

    async def gone():
        hosts = await n.list_instances(ListInstanceParam(service_name=svc, group_name=GROUP, subscribe=False,
                                                         healthy_only=None))
        return "gone" if not hosts else None

    check(await until(gone) == "gone", "still listed after deregister")
    return ms, "register call"


async def naming_service_list(cl):
    # public named for both: 3.x registers into "public" but lists services of its default id ""
    n = await cl.naming(namespace="public")
    svc, grp = "list-" + RUN, "GPYL" + RUN
    check(await n.register_instance(RegisterInstanceParam(service_name=svc, group_name=grp, ip="127.0.0.1",
                                                          port=18202)), "register returned false")

    async def listed():
        sl = await n.list_services(ListServiceParam(namespace_id="public", group_name=grp, page_no=1, page_size=10))
        return sl if sl.count == 1 and svc in sl.services else None

    t0 = time.monotonic()
    sl = await until(listed)
    check(sl is not None and not isinstance(sl, Exception), f"services of {grp}: {sl}")
    return int((time.monotonic() - t0) * 1000), "until listed"


async def naming_subscribe_push(cl):
    sub = await cl.naming(role="sub")
    n = await cl.naming()
    svc = "push-" + RUN
    got = asyncio.Queue()

    async def on_change(hosts):
        await got.put(addrs(hosts))

    await sub.subscribe(SubscribeServiceParam(service_name=svc, group_name=GROUP, subscribe_callback=on_change))
    await asyncio.sleep(0.5)

    async def wait_for(pred, timeout):
        end = time.monotonic() + timeout
        while True:
            try:
                l = await asyncio.wait_for(got.get(), max(0.01, end - time.monotonic()))
            except asyncio.TimeoutError:
                return None
            if pred(l):
                return l

    t0 = time.monotonic()
    check(await n.register_instance(reg(svc, 18203)), "register returned false")
    check(await wait_for(lambda l: "127.0.0.1:18203" in l, 5) is not None, "no push with the new instance within 5 s")
    ms = int((time.monotonic() - t0) * 1000)
    t1 = time.monotonic()
    check(await n.deregister_instance(DeregisterInstanceParam(service_name=svc, group_name=GROUP, ip="127.0.0.1",
                                                              port=18203)), "deregister returned false")
    check(await wait_for(lambda l: "127.0.0.1:18203" not in l, 5) is not None,
          "no push without the removed instance within 5 s")
    return ms, f"register→callback {ms} ms, deregister→callback {int((time.monotonic() - t1) * 1000)} ms"


async def readable(c, data_id, want, group=GROUP, timeout=10.0):
    async def read():
        v = await c.get_config(ConfigParam(data_id=data_id, group=group))
        return "ok" if (v or "") == want else None

    return await until(read, timeout) == "ok"


async def config_publish_get(cl):
    c = await cl.configs()
    d = "pg-" + RUN
    content = "k=v\nname=测试😀"
    t0 = time.monotonic()
    check(await c.publish_config(ConfigParam(data_id=d, group=GROUP, content=content)), "publish returned false")
    check(await readable(c, d, content), "not readable after publish")
    check(await c.publish_config(ConfigParam(data_id=d, group=GROUP, content="v2")), "republish returned false")
    check(await readable(c, d, "v2"), "republished content not readable")
    return int((time.monotonic() - t0) * 1000), "publish until readable"


async def config_listen_push(cl):
    c = await cl.configs(role="listener")
    p = await cl.configs()
    d = "ls-" + RUN
    check(await p.publish_config(ConfigParam(data_id=d, group=GROUP, content="v0")), "publish returned false")
    check(await readable(c, d, "v0"), "v0 not readable")
    got = asyncio.Queue()

    async def on_change(tenant, group, data_id, content):
        await got.put(content)

    await c.add_listener(d, GROUP, on_change)
    # the SDK sends its listen requests from a 5 s loop: let the first one reach the server, so
    # that what follows measures the push
    await asyncio.sleep(5.5)
    t0 = time.monotonic()
    check(await p.publish_config(ConfigParam(data_id=d, group=GROUP, content="v1")), "publish returned false")
    end = t0 + 15
    while True:
        try:
            v = await asyncio.wait_for(got.get(), max(0.01, end - time.monotonic()))
        except asyncio.TimeoutError:
            raise Fail("no listener call with v1 within 15 s")
        if v == "v1":
            break
    ms = int((time.monotonic() - t0) * 1000)
    check(ms < 5000, f"listener told after {ms} ms (not pushed?)")
    return ms, "publish to listener"


async def config_remove(cl):
    c = await cl.configs()
    d = "rm-" + RUN
    check(await c.publish_config(ConfigParam(data_id=d, group=GROUP, content="x")), "publish returned false")
    check(await readable(c, d, "x"), "not readable")
    t0 = time.monotonic()
    check(await c.remove_config(ConfigParam(data_id=d, group=GROUP)), "remove returned false")
    check(await readable(c, d, ""), "still readable after remove")
    return int((time.monotonic() - t0) * 1000), "remove until gone"


async def config_namespace(cl):
    ns = "py-ns-" + RUN
    inns = await cl.configs(namespace=ns, role="ns")
    pub = await cl.configs()
    d = "ns-" + RUN
    check(await inns.publish_config(ConfigParam(data_id=d, group=GROUP, content="in-ns")), "publish returned false")
    check(await readable(inns, d, "in-ns"), "not readable in the namespace")
    outside = await pub.get_config(ConfigParam(data_id=d, group=GROUP))
    check(not outside, f"public namespace reads {outside!r}")
    return -1, "isolated by tenant"


async def auth_ok(cl):
    check(os.environ.get("NACOS_USERNAME"), "no NACOS_USERNAME")
    n = await cl.naming(role="auth")
    svc = "auth-" + RUN
    check(await n.register_instance(reg(svc, 18209)), "register returned false")

    async def listed():
        hosts = await n.list_instances(ListInstanceParam(service_name=svc, group_name=GROUP, subscribe=False,
                                                         healthy_only=None))
        return hosts if "127.0.0.1:18209" in addrs(hosts) else None

    check(isinstance(await until(listed), list), "the registered instance is not listed")
    c = await cl.configs(role="auth")
    d = "auth-" + RUN
    check(await c.publish_config(ConfigParam(data_id=d, group=GROUP, content="s")), "publish returned false")
    check(await readable(c, d, "s"), "not readable")
    return -1, "logged in as " + os.environ["NACOS_USERNAME"]


SCENARIOS = {
    "naming.register": naming_register,
    "naming.service.list": naming_service_list,
    "naming.subscribe.push": naming_subscribe_push,
    "config.publish.get": config_publish_get,
    "config.listen.push": config_listen_push,
    "config.remove": config_remove,
    "config.namespace": config_namespace,
    "auth.naming.config": auth_ok,
}


async def main():
    names = sys.argv[3:] or ["all"]
    if names == ["all"]:
        names = [n for n in SCENARIOS if not n.startswith("auth.")]
    elif names == ["auth"]:
        names = [n for n in SCENARIOS if n.startswith("auth.")]
    for name in names:
        cl = Clients()
        t0 = time.monotonic()
        try:
            ms, detail = await asyncio.wait_for(SCENARIOS[name](cl), 60)
            result(name, True, ms, detail)
        except Fail as e:
            result(name, False, -1, str(e))
        except Exception as e:
            result(name, False, -1, f"{type(e).__name__}: {e}")
        finally:
            await cl.close()
            print(f"scenario {name} took {int((time.monotonic() - t0) * 1000)} ms", file=sys.stderr, flush=True)


if __name__ == "__main__":
    asyncio.run(main())
    sys.stdout.flush()
    os._exit(0)  # the SDK's background tasks and gRPC threads would keep the process alive
