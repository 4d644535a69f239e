package nacosd.conformance;

import com.alibaba.nacos.api.NacosFactory;
import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.config.ConfigService;
import com.alibaba.nacos.api.config.listener.AbstractListener;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import com.alibaba.nacos.api.naming.pojo.Instance;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * Conformance scenarios on the raw Java Nacos client, built against every client version the suite
 * runs (1.1.4 to 1.4.8: only API every one of them has, the rest through reflection).
 *
 * <p>Usage: {@code Scenarios <host:port> <scenario|all|slow>...}; {@code all} is every scenario that
 * needs no harness action and is quick, {@code slow} the ones that wait for beat timeouts. Each
 * scenario prints exactly one line {@code RESULT {"scenario":..,"ok":..,"ms":..,"detail":..}} on
 * stdout. A scenario that needs the harness to act (server restart, process pause) prints
 * {@code PHASE <scenario> <name> [args]} and waits for a line on stdin before going on. The process
 * exits 0 when it ran every scenario, whatever their outcome.
 */
public final class Scenarios {

    /** Thrown by a scenario whose check failed; the message is the detail. */
    static final class Fail extends Exception {
        Fail(String msg) {
            super(msg);
        }
    }

    /** A scenario returns its measured latency (ms, -1 if none) and a detail. */
    record Outcome(long ms, String detail) {
    }

    interface Scenario {
        Outcome run() throws Exception;
    }

    /** Scenarios that need the harness (PHASE lines). */
    static final List<String> PHASED = Arrays.asList("naming.restart.reregister", "naming.beat.resume");

    /** Scenarios that wait for beat timeouts (tens of seconds); run in their own process. */
    static final List<String> SLOW = Arrays.asList("naming.beat.expire", "naming.beat.resume");

    private final String server;
    private final String run;
    private final BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    private final List<AutoCloseable> closers = new ArrayList<>();
    private final Map<String, NamingService> namingClients = new HashMap<>();

    Scenarios(String server, String run) {
        this.server = server;
        this.run = run;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: Scenarios <host:port> <scenario|all>...");
            System.exit(2);
        }
        System.setProperty("com.alibaba.nacos.client.naming.local.ip", "127.0.0.1");
        // processes of several client versions start at once: the version keeps their names apart
        Scenarios s = new Scenarios(args[0], Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36)
                + System.getProperty("conformance.tag", ""));
        Map<String, Scenario> all = s.scenarios();
        List<String> names = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("all")) {
                for (String n : all.keySet()) {
                    if (!PHASED.contains(n) && !SLOW.contains(n)) {
                        names.add(n);
                    }
                }
            } else if (args[i].equals("slow")) {
                names.addAll(SLOW);
            } else if (args[i].equals("list")) {
                all.keySet().forEach(System.out::println);
                return;
            } else {
                names.add(args[i]);
            }
        }
        for (String n : names) {
            Scenario sc = all.get(n);
            if (sc == null) {
                result(n, false, -1, "unknown scenario");
                continue;
            }
            long start = System.nanoTime();
            try {
                Outcome o = sc.run();
                result(n, true, o.ms(), o.detail());
            } catch (Fail f) {
                result(n, false, -1, f.getMessage());
            } catch (Throwable t) {
                result(n, false, -1, t.toString());
            } finally {
                s.closeAll();
                System.err.printf("scenario %s took %d ms%n", n, (System.nanoTime() - start) / 1_000_000);
            }
        }
        System.exit(0);
    }

    // ---- helpers ----

    static void result(String name, boolean ok, long ms, String detail) {
        System.out.println("RESULT {\"scenario\":" + q(name) + ",\"ok\":" + ok + ",\"ms\":" + ms
                + ",\"detail\":" + q(detail == null ? "" : detail) + "}");
        System.out.flush();
    }

    /** shutDown(), which NamingService and ConfigService have only since 1.3. */
    static void shutDown(Object client) throws Exception {
        try {
            client.getClass().getMethod("shutDown").invoke(client);
        } catch (NoSuchMethodException e) {
            // 1.1 and 1.2: nothing to close but the process
        }
    }

    /**
     * Stops a naming client's beats without deregistering: shutDown() where it exists, else the
     * BeatReactor's executor (1.1 and 1.2 have no shutDown).
     */
    static void stopBeats(NamingService n) throws Exception {
        try {
            n.getClass().getMethod("shutDown").invoke(n);
            return;
        } catch (NoSuchMethodException e) {
            // below
        }
        java.lang.reflect.Field f = n.getClass().getDeclaredField("beatReactor");
        f.setAccessible(true);
        Object reactor = f.get(n);
        java.lang.reflect.Field ex = reactor.getClass().getDeclaredField("executorService");
        ex.setAccessible(true);
        ((java.util.concurrent.ExecutorService) ex.get(reactor)).shutdownNow();
    }

    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    void closeAll() {
        Collections.reverse(closers);
        for (AutoCloseable c : closers) {
            try {
                c.close();
            } catch (Exception ignored) {
                // best effort
            }
        }
        closers.clear();
    }

    Properties props(String namespace) {
        Properties p = new Properties();
        p.setProperty(PropertyKeyConst.SERVER_ADDR, server);
        if (namespace != null) {
            p.setProperty(PropertyKeyConst.NAMESPACE, namespace);
        }
        return p;
    }

    /**
     * Returns the naming client for (namespace, role), created once per process: NamingService.shutDown
     * takes about 6 s in 1.4.8, so clients are shared across scenarios (service names are unique).
     */
    NamingService naming(String namespace, String role) throws Exception {
        String key = namespace + "/" + role;
        NamingService n = namingClients.get(key);
        if (n == null) {
            n = NacosFactory.createNamingService(props(namespace));
            namingClients.put(key, n);
        }
        return n;
    }

    NamingService naming(String namespace) throws Exception {
        return naming(namespace, "main");
    }

    /**
     * Returns one naming client per server address of the target, each given that address only
     * (created once per process). With a single address that is the main client.
     */
    List<NamingService> members(String namespace) throws Exception {
        String[] addrs = server.split(",");
        if (addrs.length == 1) {
            return Collections.singletonList(naming(namespace));
        }
        List<NamingService> l = new ArrayList<>();
        for (String a : addrs) {
            String key = namespace + "/member " + a.trim();
            NamingService n = namingClients.get(key);
            if (n == null) {
                Properties p = props(namespace);
                p.setProperty(PropertyKeyConst.SERVER_ADDR, a.trim());
                n = NacosFactory.createNamingService(p);
                namingClients.put(key, n);
            }
            l.add(n);
        }
        return l;
    }

    /**
     * Waits (polling, up to timeoutMs) until every server address of the target lists the ports of
     * service s (DEFAULT_GROUP), and returns how long that took. A client given all cluster
     * addresses sends each query to a random member; an ephemeral instance reaches the members
     * other than its owner by Distro replication (about 1 s later on Java Nacos), so a scenario
     * that reads the same service several times once waits here for the instance to be everywhere.
     * On a single node it ends at the first read. Fails when some member never lists them.
     */
    long visibleEverywhere(String namespace, String s, long timeoutMs, int... ports) throws Exception {
        List<NamingService> ms = members(namespace);
        String[] addrs = server.split(",");
        return eventually(timeoutMs, unchecked(() -> {
            for (int k = 0; k < ms.size(); k++) {
                List<Instance> l = ms.get(k).getAllInstances(s, false);
                for (int p : ports) {
                    if (l.stream().noneMatch(i -> i.getPort() == p)) {
                        return (ms.size() == 1 ? "" : addrs[k].trim() + " ") + "lists " + describe(l)
                                + ", not port " + p;
                    }
                }
            }
            return null;
        }));
    }

    ConfigService config(String namespace) throws Exception {
        ConfigService c = NacosFactory.createConfigService(props(namespace));
        closers.add(() -> shutDown(c));
        return c;
    }

    String svc(String base) {
        return "conf." + base + "." + run;
    }

    static Instance inst(String ip, int port) {
        Instance i = new Instance();
        i.setIp(ip);
        i.setPort(port);
        return i;
    }

    /** Polls cond every 100 ms until it returns null (success) or the deadline passes. */
    static long eventually(long timeoutMs, Supplier<String> cond) throws Fail {
        long start = System.nanoTime();
        String last = "never checked";
        while (true) {
            try {
                last = cond.get();
            } catch (RuntimeException e) {
                last = e.toString();
            }
            long el = (System.nanoTime() - start) / 1_000_000;
            if (last == null) {
                return el;
            }
            if (el > timeoutMs) {
                throw new Fail("after " + el + " ms: " + last);
            }
            sleep(100);
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void check(boolean cond, String msg) throws Fail {
        if (!cond) {
            throw new Fail(msg);
        }
    }

    interface IOSupplier<T> {
        T get() throws Exception;
    }

    static <T> Supplier<T> unchecked(IOSupplier<T> s) {
        return () -> {
            try {
                return s.get();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        };
    }

    static String describe(List<Instance> l) {
        StringBuilder b = new StringBuilder("[");
        for (Instance i : l) {
            b.append(i.getIp()).append(':').append(i.getPort()).append('/').append(i.getClusterName())
                    .append(i.isHealthy() ? "/healthy" : "/unhealthy").append(i.isEnabled() ? "" : "/disabled")
                    .append(' ');
        }
        return b.append(']').toString();
    }

    // ---- scenarios ----

    Map<String, Scenario> scenarios() {
        Map<String, Scenario> m = new LinkedHashMap<>();
        m.put("naming.register.ephemeral", this::registerEphemeral);
        m.put("naming.register.persistent", this::registerPersistent);
        m.put("naming.group", this::group);
        m.put("naming.cluster", this::cluster);
        m.put("naming.namespace", this::namingNamespace);
        m.put("naming.metadata.weight", this::metadataWeight);
        m.put("naming.select", this::select);
        m.put("naming.service.list", this::serviceList);
        m.put("naming.server.status", this::serverStatus);
        m.put("naming.push.add", this::pushAdd);
        m.put("naming.push.remove", this::pushRemove);
        m.put("config.publish.get", this::publishGet);
        m.put("config.read-your-write", this::readYourWrite);
        m.put("config.listener", this::listener);
        m.put("config.remove", this::configRemove);
        m.put("config.namespace", this::configNamespace);
        m.put("config.unicode", this::unicode);
        m.put("config.large", this::large);
        m.put("config.many", this::many);
        m.put("naming.beat.expire", this::beatExpire);
        m.put("naming.restart.reregister", this::restartReregister);
        m.put("naming.beat.resume", this::beatResume);
        return m;
    }

    Outcome registerEphemeral() throws Exception {
        NamingService n = naming(null);
        String s = svc("eph");
        long t0 = System.nanoTime();
        n.registerInstance(s, "127.0.0.1", 18080);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        eventually(5000, unchecked(() -> {
            List<Instance> l = n.getAllInstances(s, false);
            if (l.size() != 1) {
                return "want 1 instance, got " + describe(l);
            }
            Instance i = l.get(0);
            if (!i.isEphemeral() || !i.isHealthy() || !i.isEnabled() || i.getPort() != 18080
                    || !"DEFAULT".equals(i.getClusterName()) || i.getWeight() != 1.0) {
                return "unexpected instance " + i;
            }
            return null;
        }));
        n.deregisterInstance(s, "127.0.0.1", 18080);
        eventually(5000, unchecked(() -> n.getAllInstances(s, false).isEmpty() ? null : "still registered"));
        return new Outcome(ms, "register latency");
    }

    Outcome registerPersistent() throws Exception {
        NamingService n = naming(null);
        String s = svc("pers");
        Instance i = inst("127.0.0.1", 18081);
        i.setEphemeral(false);
        n.registerInstance(s, i);
        long ms = eventually(5000, unchecked(() -> {
            List<Instance> l = n.getAllInstances(s, false);
            if (l.size() != 1 || l.get(0).isEphemeral()) {
                return "want 1 persistent instance, got " + l;
            }
            return null;
        }));
        n.deregisterInstance(s, i);
        eventually(5000, unchecked(() -> n.getAllInstances(s, false).isEmpty() ? null : "still registered"));
        return new Outcome(ms, "visible after");
    }

    Outcome group() throws Exception {
        NamingService n = naming(null);
        String s = svc("grp");
        n.registerInstance(s, "G1", "127.0.0.1", 18082);
        long ms = eventually(5000, unchecked(() -> {
            List<Instance> g = n.getAllInstances(s, "G1", false);
            List<Instance> d = n.getAllInstances(s, false);
            if (g.size() != 1 || !d.isEmpty()) {
                return "G1=" + describe(g) + " DEFAULT_GROUP=" + describe(d);
            }
            if (!("G1@@" + s).equals(g.get(0).getServiceName())) {
                return "serviceName " + g.get(0).getServiceName();
            }
            return null;
        }));
        n.deregisterInstance(s, "G1", "127.0.0.1", 18082);
        return new Outcome(ms, "visible in its group only");
    }

    Outcome cluster() throws Exception {
        NamingService n = naming(null);
        String s = svc("clu");
        n.registerInstance(s, "127.0.0.1", 18083, "c1");
        n.registerInstance(s, "127.0.0.1", 18084, "c2");
        long ms = eventually(5000, unchecked(() -> {
            List<Instance> c1 = n.getAllInstances(s, Arrays.asList("c1"), false);
            List<Instance> both = n.getAllInstances(s, Arrays.asList("c1", "c2"), false);
            List<Instance> all = n.getAllInstances(s, false);
            if (c1.size() != 1 || c1.get(0).getPort() != 18083 || !"c1".equals(c1.get(0).getClusterName())) {
                return "c1=" + describe(c1);
            }
            if (both.size() != 2 || all.size() != 2) {
                return "c1,c2=" + describe(both) + " all=" + describe(all);
            }
            return null;
        }));
        return new Outcome(ms, "cluster filter");
    }

    Outcome namingNamespace() throws Exception {
        NamingService ns = naming("conf-ns-" + run);
        NamingService pub = naming(null, "public");
        String s = svc("nsn");
        ns.registerInstance(s, "127.0.0.1", 18085);
        long ms = eventually(5000, unchecked(() -> {
            List<Instance> a = ns.getAllInstances(s, false);
            List<Instance> b = pub.getAllInstances(s, false);
            if (a.size() != 1 || !b.isEmpty()) {
                return "ns=" + describe(a) + " public=" + describe(b);
            }
            return null;
        }));
        return new Outcome(ms, "isolated by namespace");
    }

    Outcome metadataWeight() throws Exception {
        NamingService n = naming(null);
        String s = svc("meta");
        Instance i = inst("127.0.0.1", 18086);
        i.setWeight(2.5);
        Map<String, String> md = new HashMap<>();
        md.put("version", "1.2");
        md.put("zone", "ä-1");
        i.setMetadata(md);
        n.registerInstance(s, i);
        long ms = eventually(5000, unchecked(() -> {
            List<Instance> l = n.getAllInstances(s, false);
            if (l.size() != 1) {
                return "got " + describe(l);
            }
            Instance g = l.get(0);
            if (g.getWeight() != 2.5 || !md.equals(g.getMetadata())) {
                return "weight " + g.getWeight() + " metadata " + g.getMetadata();
            }
            return null;
        }));
        return new Outcome(ms, "metadata and weight round-trip");
    }

    Outcome select() throws Exception {
        NamingService n = naming(null);
        String s = svc("sel");
        n.registerInstance(s, inst("127.0.0.1", 18087));
        Instance off = inst("127.0.0.1", 18088);
        off.setEnabled(false);
        n.registerInstance(s, off);
        Instance zero = inst("127.0.0.1", 18095);
        zero.setWeight(0);
        n.registerInstance(s, zero);
        // The reads below go to random members: the instances must be on every one first.
        long visible = visibleEverywhere(null, s, 5000, 18087, 18095);
        long ms = visible + eventually(5000, unchecked(() -> {
            // The server drops disabled instances from instance/list (naming-v1.md);
            // the client drops weight-0 ones from selectInstances(healthy=true).
            List<Instance> all = n.getAllInstances(s, false);
            List<Instance> healthy = n.selectInstances(s, true, false);
            if (all.size() != 2) {
                return "all=" + describe(all);
            }
            if (healthy.size() != 1 || healthy.get(0).getPort() != 18087) {
                return "healthy=" + describe(healthy);
            }
            return null;
        }));
        for (int k = 0; k < 5; k++) {
            Instance one = n.selectOneHealthyInstance(s, false);
            check(one != null && one.getPort() == 18087, "selectOneHealthyInstance gave " + one);
        }
        // subscribe=true path: HostReactor cache
        List<Instance> sub = n.selectInstances(s, true);
        check(sub.size() == 1 && sub.get(0).getPort() == 18087, "subscribed select gave " + describe(sub));
        return new Outcome(ms, "disabled instance filtered");
    }

    Outcome serviceList() throws Exception {
        NamingService n = naming(null);
        String s = svc("list");
        n.registerInstance(s, "LG" + run, "127.0.0.1", 18089);
        long ms = eventually(5000, unchecked(() -> {
            var v = n.getServicesOfServer(1, 100, "LG" + run);
            if (v.getCount() != 1 || !v.getData().equals(Collections.singletonList(s))) {
                return "count=" + v.getCount() + " data=" + v.getData();
            }
            return null;
        }));
        return new Outcome(ms, "getServicesOfServer");
    }

    Outcome serverStatus() throws Exception {
        NamingService n = naming(null);
        String st = n.getServerStatus();
        check("UP".equals(st), "status " + st);
        return new Outcome(-1, st);
    }

    Outcome pushAdd() throws Exception {
        NamingService sub = naming(null, "subscriber");
        NamingService reg = naming(null);
        String s = svc("padd");
        BlockingQueue<List<Instance>> events = new LinkedBlockingQueue<>();
        sub.subscribe(s, e -> events.add(((NamingEvent) e).getInstances()));
        // Let the subscription's first query (which registers the UDP target) finish.
        sub.getAllInstances(s);
        sleep(1500);
        events.clear();
        long t0 = System.nanoTime();
        reg.registerInstance(s, "127.0.0.1", 18090);
        while (true) {
            List<Instance> l = events.poll(15, TimeUnit.SECONDS);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            if (l == null) {
                throw new Fail("no event with the new instance within 15 s");
            }
            if (l.size() == 1 && l.get(0).getPort() == 18090) {
                check(ms < 5000, "event after " + ms + " ms (poll, not push?)");
                return new Outcome(ms, "register to listener");
            }
        }
    }

    Outcome pushRemove() throws Exception {
        NamingService sub = naming(null, "subscriber");
        NamingService reg = naming(null);
        String s = svc("prm");
        reg.registerInstance(s, "127.0.0.1", 18091);
        reg.registerInstance(s, "127.0.0.1", 18092);
        BlockingQueue<List<Instance>> events = new LinkedBlockingQueue<>();
        sub.subscribe(s, e -> events.add(((NamingEvent) e).getInstances()));
        eventually(5000, unchecked(() -> sub.getAllInstances(s).size() == 2 ? null : "not 2 yet"));
        sleep(1500);
        events.clear();
        long t0 = System.nanoTime();
        reg.deregisterInstance(s, "127.0.0.1", 18092);
        while (true) {
            List<Instance> l = events.poll(15, TimeUnit.SECONDS);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            if (l == null) {
                throw new Fail("no event without the removed instance within 15 s");
            }
            if (l.size() == 1 && l.get(0).getPort() == 18091) {
                check(ms < 5000, "event after " + ms + " ms (poll, not push?)");
                return new Outcome(ms, "deregister to listener");
            }
        }
    }

    Outcome beatExpire() throws Exception {
        NamingService dying = NacosFactory.createNamingService(props(null));
        NamingService watch = naming(null, "watch");
        String s = svc("beat");
        dying.registerInstance(s, "127.0.0.1", 18093);
        // A live instance keeps healthy/total above the default protect threshold 0.0; without it
        // the server reports the lone unhealthy instance as healthy (naming-v1.md, threshold).
        watch.registerInstance(s, "127.0.0.1", 18096);
        eventually(5000, unchecked(() -> watch.getAllInstances(s, false).size() == 2 ? null : "not registered"));
        // Let at least one beat arrive, then stop beating without deregistering.
        sleep(6000);
        long t0 = System.nanoTime();
        // shutDown stops the beat executor first, then takes a few seconds for the rest.
        new Thread(() -> {
            try {
                stopBeats(dying);
            } catch (Exception ignored) {
                // the process exits anyway
            }
        }).start();
        eventually(40000, unchecked(() -> {
            for (Instance i : watch.getAllInstances(s, false)) {
                if (i.getPort() == 18093) {
                    return i.isHealthy() ? "still healthy" : null;
                }
            }
            return "dying instance missing";
        }));
        long unhealthy = (System.nanoTime() - t0) / 1_000_000;
        eventually(50000, unchecked(() -> {
            List<Instance> l = watch.getAllInstances(s, false);
            return l.size() == 1 && l.get(0).getPort() == 18096 ? null : "instances " + describe(l);
        }));
        long gone = (System.nanoTime() - t0) / 1_000_000;
        long sinceStop = gone;
        // Last beat was 0-5 s before shutdown: unhealthy at 15 s, gone at 30 s after it.
        check(unhealthy >= 8000 && unhealthy <= 22000, "unhealthy after " + unhealthy + " ms");
        check(gone >= 22000 && gone <= 40000, "gone after " + gone + " ms");
        return new Outcome(unhealthy, "unhealthy after " + unhealthy + " ms, gone after " + sinceStop + " ms");
    }

    /**
     * Issue 7 item 0: the process pauses (the harness stops it) until the server has dropped its
     * instance, then goes on; its next beat gets 20404 (or, before light beats, carries the full
     * beat) and the client registers again, as after a network blip or a long GC pause.
     */
    Outcome beatResume() throws Exception {
        NamingService n = naming(null, "resume");
        String s = svc("resume");
        n.registerInstance(s, "127.0.0.1", 18097);
        eventually(5000, unchecked(() -> n.getAllInstances(s, false).size() == 1 ? null : "not registered"));
        sleep(1000); // one beat at least
        System.out.println("PHASE naming.beat.resume pause DEFAULT_GROUP@@" + s + " 18097");
        System.out.flush();
        String line = stdin.readLine();
        check(line != null, "harness closed stdin");
        check(!line.startsWith("fail"), line);
        // line: "back <ms>": the harness saw the instance listed again after the resume
        return new Outcome(Long.parseLong(line.split(" ")[1]), "expired while paused, listed again "
                + line.split(" ")[1] + " ms after the resume");
    }

    Outcome restartReregister() throws Exception {
        NamingService n = naming(null);
        String s = svc("rst");
        n.registerInstance(s, "127.0.0.1", 18094);
        eventually(5000, unchecked(() -> n.getAllInstances(s, false).size() == 1 ? null : "not registered"));
        System.out.println("PHASE naming.restart.reregister restart");
        System.out.flush();
        String line = stdin.readLine();
        check(line != null, "harness closed stdin");
        long t0 = System.nanoTime();
        AtomicReference<String> last = new AtomicReference<>("");
        long ms = eventually(30000, unchecked(() -> {
            List<Instance> l = n.getAllInstances(s, false);
            last.set(describe(l));
            return l.size() == 1 && l.get(0).isHealthy() ? null : "instances " + last.get();
        }));
        long back = (System.nanoTime() - t0) / 1_000_000;
        // Java Nacos loses ephemeral instances on restart and answers the next beat with code 20404,
        // upon which the client re-registers. Either way the instance must stay healthy past the
        // 30 s expiry, i.e. the restarted server accepts this client's (light) beats. (A lone
        // unhealthy instance is reported healthy under the default protect threshold, so presence
        // after the expiry time is what tells.)
        sleep(32000);
        List<Instance> l = n.getAllInstances(s, false);
        check(l.size() == 1, "32 s later: " + describe(l));
        return new Outcome(ms, "back " + back + " ms after restart, still there 32 s later");
    }

    /**
     * Reads (dataId, group) every 10 ms until it equals want (null: absent) and returns how long that took.
     * Java 1.4.8 serves reads from a disk dump written after the database commit, so a real app that
     * reads its own write polls the same way; the time is what the table reports as time-to-readable.
     */
    static long readable(ConfigService c, String dataId, String group, String want, long timeoutMs) throws Fail {
        long start = System.nanoTime();
        String got = null;
        while (true) {
            try {
                got = c.getConfig(dataId, group, 3000);
            } catch (Exception e) {
                got = "<" + e + ">";
            }
            long el = (System.nanoTime() - start) / 1_000_000;
            if (java.util.Objects.equals(want, got)) {
                return el;
            }
            if (el > timeoutMs) {
                throw new Fail(dataId + "@" + group + " after " + el + " ms: got "
                        + (got == null ? "null" : got.length() > 60 ? "length " + got.length() : got));
            }
            sleep(10);
        }
    }

    Outcome publishGet() throws Exception {
        ConfigService c = config(null);
        String id = "conf.pg." + run;
        check(c.getConfig(id, "DEFAULT_GROUP", 3000) == null, "config exists before publish");
        long t0 = System.nanoTime();
        check(c.publishConfig(id, "DEFAULT_GROUP", "a=1\nb=2"), "publish returned false");
        long pub = (System.nanoTime() - t0) / 1_000_000;
        long ms = pub + readable(c, id, "DEFAULT_GROUP", "a=1\nb=2", 10000);
        check(c.publishConfig(id, "G2", "other"), "publish G2 false");
        readable(c, id, "G2", "other", 10000);
        check("a=1\nb=2".equals(c.getConfig(id, "DEFAULT_GROUP", 3000)), "group isolation");
        return new Outcome(ms, "publish " + pub + " ms, readable " + ms + " ms after the publish began");
    }

    /**
     * Reads each of 20 fresh keys once, right after its publish answered: read-your-write. Java 1.4.8
     * answers from an asynchronous dump and may serve the old value (a recorded Java defect).
     */
    Outcome readYourWrite() throws Exception {
        ConfigService c = config(null);
        int stale = 0;
        String first = null;
        for (int i = 0; i < 20; i++) {
            String id = "conf.ryw." + run + "." + i;
            check(c.publishConfig(id, "DEFAULT_GROUP", "v" + i), "publish " + i);
            String got = c.getConfig(id, "DEFAULT_GROUP", 3000);
            if (!("v" + i).equals(got)) {
                stale++;
                if (first == null) {
                    first = id + " read " + got;
                }
            }
        }
        check(stale == 0, stale + " of 20 reads right after their publish were stale (" + first + ")");
        return new Outcome(-1, "20 of 20 reads right after the publish saw it");
    }

    Outcome listener() throws Exception {
        ConfigService c = config(null);
        ConfigService p = config(null);
        String id = "conf.lis." + run;
        check(p.publishConfig(id, "DEFAULT_GROUP", "v0"), "publish v0");
        BlockingQueue<String> got = new LinkedBlockingQueue<>();
        c.addListener(id, "DEFAULT_GROUP", new AbstractListener() {
            @Override
            public void receiveConfigInfo(String s) {
                got.add(s);
            }
        });
        // The first long poll answers at once (No-Hangup); give it time to hang.
        sleep(2000);
        got.clear();
        long t0 = System.nanoTime();
        check(p.publishConfig(id, "DEFAULT_GROUP", "v1"), "publish v1");
        String s = got.poll(35, TimeUnit.SECONDS);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        check("v1".equals(s), "listener got " + s);
        // a held long poll answers at once; 5 s tells that from the 30 s poll cycle without timing the server
        check(ms < 5000, "listener woken after " + ms + " ms");
        return new Outcome(ms, "publish to listener");
    }

    Outcome configRemove() throws Exception {
        ConfigService c = config(null);
        String id = "conf.rm." + run;
        check(c.publishConfig(id, "DEFAULT_GROUP", "x"), "publish");
        readable(c, id, "DEFAULT_GROUP", "x", 10000);
        long t0 = System.nanoTime();
        check(c.removeConfig(id, "DEFAULT_GROUP"), "remove returned false");
        long pub = (System.nanoTime() - t0) / 1_000_000;
        long ms = pub + readable(c, id, "DEFAULT_GROUP", null, 10000);
        check(c.removeConfig(id, "DEFAULT_GROUP"), "second remove returned false");
        return new Outcome(ms, "remove " + pub + " ms, gone " + ms + " ms after the remove began");
    }

    Outcome configNamespace() throws Exception {
        ConfigService ns = config("conf-cns-" + run);
        ConfigService pub = config(null);
        String id = "conf.ns." + run;
        check(ns.publishConfig(id, "DEFAULT_GROUP", "in-ns"), "publish in ns");
        readable(ns, id, "DEFAULT_GROUP", "in-ns", 10000);
        check(pub.getConfig(id, "DEFAULT_GROUP", 3000) == null, "visible in public");
        check(pub.publishConfig(id, "DEFAULT_GROUP", "in-public"), "publish in public");
        readable(pub, id, "DEFAULT_GROUP", "in-public", 10000);
        check("in-ns".equals(ns.getConfig(id, "DEFAULT_GROUP", 3000)), "ns content changed by public publish");
        return new Outcome(-1, "isolated by tenant");
    }

    Outcome unicode() throws Exception {
        ConfigService c = config(null);
        String id = "conf.uni." + run;
        String content = "名字=测试\nemoji=😀✓\nquote=\"'&=%+ \\\ntab=\t";
        check(c.publishConfig(id, "DEFAULT_GROUP", content), "publish");
        readable(c, id, "DEFAULT_GROUP", content, 10000);
        return new Outcome(-1, "unicode round-trip");
    }

    Outcome large() throws Exception {
        ConfigService c = config(null);
        String id = "conf.big." + run;
        StringBuilder b = new StringBuilder(1 << 20);
        int k = 0;
        while (b.length() < (1 << 20)) {
            b.append("line").append(k++).append("=").append("abcdefghijklmnopqrstuvwxyz0123456789").append('\n');
        }
        String content = b.substring(0, 1 << 20);
        long t0 = System.nanoTime();
        check(c.publishConfig(id, "DEFAULT_GROUP", content), "publish 1 MiB returned false");
        readable(c, id, "DEFAULT_GROUP", content, 15000);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        return new Outcome(ms, "1 MiB publish until readable");
    }

    Outcome many() throws Exception {
        ConfigService c = config(null);
        ConfigService p = config(null);
        int n = 20;
        for (int i = 0; i < n; i++) {
            check(p.publishConfig("conf.many." + run + "." + i, "DEFAULT_GROUP", "v" + i), "publish " + i);
        }
        BlockingQueue<String> got = new LinkedBlockingQueue<>();
        for (int i = 0; i < n; i++) {
            final String id = "conf.many." + run + "." + i;
            readable(c, id, "DEFAULT_GROUP", "v" + i, 10000);
            c.addListener(id, "DEFAULT_GROUP", new AbstractListener() {
                @Override
                public void receiveConfigInfo(String s) {
                    got.add(id + "=" + s);
                }
            });
        }
        sleep(2000);
        got.clear();
        long t0 = System.nanoTime();
        String id = "conf.many." + run + "." + (n / 2);
        check(p.publishConfig(id, "DEFAULT_GROUP", "changed"), "publish change");
        String s = got.poll(35, TimeUnit.SECONDS);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        check((id + "=changed").equals(s), "listener got " + s);
        sleep(500);
        check(got.isEmpty(), "other listeners fired: " + got);
        return new Outcome(ms, n + " keys, one change to its listener");
    }
}
