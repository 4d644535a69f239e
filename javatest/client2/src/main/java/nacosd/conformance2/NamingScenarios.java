package nacosd.conformance2;

import com.alibaba.nacos.api.NacosFactory;
import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import com.alibaba.nacos.api.naming.pojo.Instance;
import com.alibaba.nacos.api.naming.pojo.ListView;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static nacosd.conformance2.Scenarios.check;
import static nacosd.conformance2.Scenarios.props;

/**
 * Naming scenarios of the Nacos 2.x Java client (InstanceRequest, SubscribeServiceRequest and the
 * pushed NotifySubscriberRequest over gRPC; instances bound to the connection), with clients in
 * processes of their own for a killed client and for a 1.x client (nacos-client 1.4.8) on the same
 * service. Only API that every 2.x version (2.0.4 on) has.
 */
final class NamingScenarios {
    private final Scenarios sc;
    private final String server;
    private final String run;

    NamingScenarios(Scenarios sc) {
        this.sc = sc;
        this.server = sc.server();
        this.run = sc.run();
    }

    NamingService naming(Properties extra) throws Exception {
        Properties p = new Properties();
        p.setProperty(PropertyKeyConst.SERVER_ADDR, server);
        if (extra != null) {
            p.putAll(extra);
        }
        NamingService n = NacosFactory.createNamingService(p);
        sc.cleanups.add(() -> {
            try {
                n.shutDown();
            } catch (Exception e) {
                // closing
            }
        });
        return n;
    }

    NamingService naming() throws Exception {
        return naming(null);
    }

    PeerProcess peer(boolean v1, String namespace, String role) throws Exception {
        String dir = System.getProperty("JM.SNAPSHOT.PATH", "/tmp") + "/peer-" + role + "-" + run;
        PeerProcess p = v1 ? PeerProcess.v1(server, namespace, dir) : PeerProcess.v2(server, namespace, dir);
        sc.cleanups.add(() -> {
            try {
                p.close();
            } catch (Exception e) {
                // closing
            }
        });
        return p;
    }

    static Instance instance(String ip, int port, String cluster, double weight, Map<String, String> md) {
        Instance i = new Instance();
        i.setIp(ip);
        i.setPort(port);
        i.setClusterName(cluster);
        i.setWeight(weight);
        if (md != null) {
            i.setMetadata(md);
        }
        return i;
    }

    static String addrs(List<Instance> l) {
        List<String> out = new ArrayList<>();
        for (Instance i : l) {
            out.add(i.getIp() + ":" + i.getPort());
        }
        Collections.sort(out);
        return String.join(",", out);
    }

    /** Polls getAllInstances (no subscription: a query each time) until want holds; returns the last list. */
    static List<Instance> until(NamingService n, String svc, String group, List<String> clusters, long ms,
            Predicate<List<Instance>> want) throws Exception {
        long end = System.currentTimeMillis() + ms;
        List<Instance> l = List.of();
        while (System.currentTimeMillis() < end) {
            try {
                l = n.getAllInstances(svc, group, clusters, false);
                if (want.test(l)) {
                    return l;
                }
            } catch (Exception e) {
                // the server may not answer yet
            }
            Thread.sleep(100);
        }
        return l;
    }

    static Predicate<List<Instance>> has(String addr) {
        return l -> addrs(l).contains(addr);
    }

    static Predicate<List<Instance>> lacks(String addr) {
        return l -> !addrs(l).contains(addr);
    }

    /** A subscriber whose NamingEvents queue their instance lists. */
    static final class Events {
        final BlockingQueue<List<Instance>> got = new LinkedBlockingQueue<>();

        void on(NamingService n, String svc, String group) throws Exception {
            n.subscribe(svc, group, e -> {
                if (e instanceof NamingEvent) {
                    got.add(((NamingEvent) e).getInstances());
                }
            });
        }

        /** Waits for an event whose list satisfies want; null after ms. */
        List<Instance> await(long ms, Predicate<List<Instance>> want) throws InterruptedException {
            long end = System.currentTimeMillis() + ms;
            while (true) {
                long left = end - System.currentTimeMillis();
                if (left <= 0) {
                    return null;
                }
                List<Instance> l = got.poll(left, TimeUnit.MILLISECONDS);
                if (l == null) {
                    return null;
                }
                if (want.test(l)) {
                    return l;
                }
            }
        }
    }

    Map<String, Scenarios.Scenario> scenarios() {
        Map<String, Scenarios.Scenario> m = new LinkedHashMap<>();
        final String group = "G2N";

        m.put("naming.register", () -> {
            NamingService n = naming();
            String svc = "reg-" + run;
            Map<String, String> md = new LinkedHashMap<>();
            md.put("k", "v");
            md.put("zh", "中文");
            long t0 = System.nanoTime();
            n.registerInstance(svc, group, instance("127.0.0.1", 18001, "DEFAULT", 2.5, md));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            List<Instance> l = until(n, svc, group, new ArrayList<>(), 5000, has("127.0.0.1:18001"));
            check(l.size() == 1, "after register: " + addrs(l));
            Instance i = l.get(0);
            check(i.isHealthy() && i.isEnabled() && i.isEphemeral(), "healthy/enabled/ephemeral: " + i);
            check(i.getWeight() == 2.5, "weight " + i.getWeight());
            check("DEFAULT".equals(i.getClusterName()), "cluster " + i.getClusterName());
            check("v".equals(i.getMetadata().get("k")) && "中文".equals(i.getMetadata().get("zh")),
                    "metadata " + i.getMetadata());
            check((group + "@@" + svc).equals(i.getServiceName()), "serviceName " + i.getServiceName());
            // the 1.x HTTP API lists the 2.x instance
            String h = sc.httpUntil("/v1/ns/instance/list?serviceName=" + Scenarios.enc(group + "@@" + svc), "\"port\":18001");
            check(h.startsWith("200") && h.contains("\"port\":18001"), "v1 instance/list: " + h);
            n.deregisterInstance(svc, group, "127.0.0.1", 18001);
            l = until(n, svc, group, new ArrayList<>(), 5000, List::isEmpty);
            check(l.isEmpty(), "after deregister: " + addrs(l));
            return new Scenarios.Outcome(ms, "register call");
        });

        m.put("naming.select", () -> {
            // one client per instance: a 2.x connection holds one instance per service (a second
            // registerInstance of the same service replaces the first)
            NamingService n = naming();
            String svc = "sel-" + run;
            n.registerInstance(svc, group, instance("127.0.0.1", 18011, "c1", 1, null));
            naming().registerInstance(svc, group, instance("127.0.0.1", 18012, "c2", 1, null));
            Instance zero = instance("127.0.0.1", 18013, "c2", 1, null);
            zero.setWeight(0);
            naming().registerInstance(svc, group, zero);
            List<Instance> all = until(n, svc, group, new ArrayList<>(), 5000, l -> l.size() == 3);
            check(all.size() == 3, "all: " + addrs(all));
            List<Instance> c1 = until(n, svc, group, List.of("c1"), 5000, l -> l.size() == 1);
            check("127.0.0.1:18011".equals(addrs(c1)), "cluster c1: " + addrs(c1));
            List<Instance> both = n.getAllInstances(svc, group, List.of("c1", "c2"), false);
            check(both.size() == 3, "clusters c1,c2: " + addrs(both));
            List<Instance> healthy = n.selectInstances(svc, group, new ArrayList<>(), true, false);
            check("127.0.0.1:18011,127.0.0.1:18012".equals(addrs(healthy)), "selectInstances(healthy): " + addrs(healthy));
            Instance one = n.selectOneHealthyInstance(svc, group, List.of("c2"), false);
            check(one != null && one.getPort() == 18012, "selectOneHealthyInstance(c2): " + one);
            // a subscribed select answers from the pushed data
            List<Instance> sub = n.selectInstances(svc, group, new ArrayList<>(), true, true);
            check(sub.size() == 2, "subscribed select: " + addrs(sub));
            return new Scenarios.Outcome(-1, "");
        });

        m.put("naming.service.list", () -> {
            NamingService n = naming();
            String g = "GL-" + run;
            n.registerInstance("svc-a-" + run, g, instance("127.0.0.1", 18021, "DEFAULT", 1, null));
            n.registerInstance("svc-b-" + run, g, instance("127.0.0.1", 18022, "DEFAULT", 1, null));
            long t0 = System.nanoTime();
            ListView<String> v = null;
            while ((System.nanoTime() - t0) / 1_000_000 < 5000) {
                v = n.getServicesOfServer(1, 100, g);
                if (v.getCount() == 2) {
                    break;
                }
                Thread.sleep(100);
            }
            check(v != null && v.getCount() == 2 && v.getData().contains("svc-a-" + run)
                    && v.getData().contains("svc-b-" + run), "services of group " + g + ": " + (v == null ? null : v.getData()));
            String st = n.getServerStatus();
            check("UP".equals(st), "server status " + st);
            return new Scenarios.Outcome((System.nanoTime() - t0) / 1_000_000, "until listed");
        });

        m.put("naming.namespace", () -> {
            String ns = "nsn-" + run;
            String r = sc.createNamespace(ns);
            check(r.startsWith("200"), "create namespace: " + r);
            NamingService in = naming(props(PropertyKeyConst.NAMESPACE, ns));
            NamingService pub = naming();
            String svc = "ns-" + run;
            in.registerInstance(svc, group, instance("127.0.0.1", 18031, "DEFAULT", 1, null));
            List<Instance> l = until(in, svc, group, new ArrayList<>(), 5000, has("127.0.0.1:18031"));
            check(l.size() == 1, "in namespace: " + addrs(l));
            List<Instance> outside = pub.getAllInstances(svc, group, new ArrayList<>(), false);
            check(outside.isEmpty(), "public namespace lists " + addrs(outside));
            String h = sc.httpUntil("/v1/ns/instance/list?namespaceId=" + ns + "&serviceName=" + Scenarios.enc(group + "@@" + svc),
                    "\"port\":18031");
            check(h.startsWith("200") && h.contains("\"port\":18031"), "v1 list in namespace: " + h);
            return new Scenarios.Outcome(-1, "");
        });

        m.put("naming.persistent", () -> {
            // ephemeral=false: 2.0.x sends it over HTTP, later clients as PersistentInstanceRequest
            NamingService n = naming();
            String svc = "per-" + run;
            Instance i = instance("127.0.0.1", 18041, "DEFAULT", 1, null);
            i.setEphemeral(false);
            n.registerInstance(svc, group, i);
            List<Instance> l = until(n, svc, group, new ArrayList<>(), 5000, has("127.0.0.1:18041"));
            check(l.size() == 1 && !l.get(0).isEphemeral(), "persistent instance: " + l);
            n.deregisterInstance(svc, group, i);
            l = until(n, svc, group, new ArrayList<>(), 5000, List::isEmpty);
            check(l.isEmpty(), "after deregister: " + addrs(l));
            return new Scenarios.Outcome(-1, "");
        });

        m.put("naming.subscribe.push", () -> {
            NamingService sub = naming();
            NamingService reg = naming();
            String svc = "push-" + run;
            Events ev = new Events();
            ev.on(sub, svc, group);
            Thread.sleep(500);
            long t0 = System.nanoTime();
            reg.registerInstance(svc, group, instance("127.0.0.1", 18051, "DEFAULT", 1, null));
            List<Instance> got = ev.await(5000, has("127.0.0.1:18051"));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            check(got != null, "no push with the new instance within 5 s");
            long t1 = System.nanoTime();
            reg.deregisterInstance(svc, group, "127.0.0.1", 18051);
            List<Instance> gone = ev.await(5000, lacks("127.0.0.1:18051"));
            long ms2 = (System.nanoTime() - t1) / 1_000_000;
            check(gone != null, "no push without the removed instance within 5 s");
            return new Scenarios.Outcome(ms, "register→push " + ms + " ms, deregister→push " + ms2 + " ms");
        });

        m.put("naming.connection.kill", () -> {
            // a client killed without a word: its instances go with its connection
            NamingService sub = naming();
            String svc = "kill-" + run;
            Events ev = new Events();
            ev.on(sub, svc, group);
            PeerProcess p = peer(false, null, "kill");
            p.call("register " + svc + " " + group + " 127.0.0.1 18061");
            check(ev.await(10000, has("127.0.0.1:18061")) != null, "the peer's instance was never pushed");
            long t0 = System.nanoTime();
            p.kill();
            List<Instance> gone = ev.await(20000, lacks("127.0.0.1:18061"));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            check(gone != null, "the killed client's instance still listed after 20 s");
            List<Instance> l = until(sub, svc, group, new ArrayList<>(), 5000, lacks("127.0.0.1:18061"));
            check(!addrs(l).contains("127.0.0.1:18061"), "a query still lists it: " + addrs(l));
            return new Scenarios.Outcome(ms, "SIGKILL until the subscriber's push without it");
        });

        m.put("naming.mixed.v1-sees-v2", () -> {
            // a nacos-client 1.4.8 (HTTP, UDP pushes) subscribed to a service a 2.x client registers in
            PeerProcess v1 = peer(true, null, "v1sub");
            NamingService n = naming();
            String svc = "mix12-" + run;
            v1.call("subscribe " + svc + " " + group);
            Thread.sleep(500);
            long t0 = System.nanoTime();
            Map<String, String> md = new LinkedHashMap<>();
            md.put("gen", "2");
            n.registerInstance(svc, group, instance("127.0.0.1", 18071, "DEFAULT", 3, md));
            String ev = v1.awaitEvent(15000, l -> l.contains("127.0.0.1:18071"));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            check(ev != null, "the 1.x subscriber never saw the 2.x instance");
            // a 1.x client reads from any member of a cluster: another member
            // lists the instance after the Distro sync (Java's too)
            String l = v1.call("list " + svc + " " + group);
            for (long end = System.currentTimeMillis() + 5000;
                    !l.contains("127.0.0.1:18071:true:3.0:gen=2") && System.currentTimeMillis() < end; ) {
                Thread.sleep(100);
                l = v1.call("list " + svc + " " + group);
            }
            check(l.contains("127.0.0.1:18071:true:3.0:gen=2"), "1.x getAllInstances: " + l);
            n.deregisterInstance(svc, group, "127.0.0.1", 18071);
            String gone = v1.awaitEvent(15000, x -> !x.contains("127.0.0.1:18071"));
            check(gone != null, "the 1.x subscriber never saw the 2.x instance leave");
            return new Scenarios.Outcome(ms, "2.x register until the 1.x listener has it");
        });

        m.put("naming.mixed.v2-sees-v1", () -> {
            // a 2.x subscriber on a service a nacos-client 1.4.8 registers in (HTTP, beats)
            PeerProcess v1 = peer(true, null, "v1reg");
            NamingService n = naming();
            String svc = "mix21-" + run;
            Events ev = new Events();
            ev.on(n, svc, group);
            Thread.sleep(500);
            long t0 = System.nanoTime();
            v1.call("register " + svc + " " + group + " 127.0.0.1 18081 gen=1");
            List<Instance> got = ev.await(10000, has("127.0.0.1:18081"));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            check(got != null, "the 2.x subscriber never saw the 1.x instance");
            Instance i = got.get(0);
            check(i.isHealthy() && "1".equals(i.getMetadata().get("gen")), "the 1.x instance as 2.x sees it: " + i);
            v1.call("deregister " + svc + " " + group + " 127.0.0.1 18081");
            check(ev.await(10000, lacks("127.0.0.1:18081")) != null, "the 2.x subscriber never saw the 1.x instance leave");
            return new Scenarios.Outcome(ms, "1.x register until the 2.x listener has it");
        });

        m.put("auth.naming.ok", () -> {
            String user = System.getProperty("conformance.user", "nacos");
            String pw = System.getProperty("conformance.password", "nacos");
            NamingService n = naming(props(PropertyKeyConst.USERNAME, user, PropertyKeyConst.PASSWORD, pw));
            NamingService sub = naming(props(PropertyKeyConst.USERNAME, user, PropertyKeyConst.PASSWORD, pw));
            String svc = "auth-" + run;
            Events ev = new Events();
            ev.on(sub, svc, group);
            n.registerInstance(svc, group, instance("127.0.0.1", 18091, "DEFAULT", 1, null));
            check(ev.await(10000, has("127.0.0.1:18091")) != null, "no push as " + user);
            n.deregisterInstance(svc, group, "127.0.0.1", 18091);
            return new Scenarios.Outcome(-1, "");
        });

        m.put("auth.naming.anonymous", () -> {
            NamingService n = naming();
            String svc = "anon-" + run;
            String err;
            try {
                n.registerInstance(svc, group, instance("127.0.0.1", 18092, "DEFAULT", 1, null));
                err = "no error";
            } catch (Exception e) {
                err = e.getMessage();
            }
            check(!"no error".equals(err), "anonymous register had no error");
            return new Scenarios.Outcome(-1, "register: " + err);
        });
        return m;
    }
}
