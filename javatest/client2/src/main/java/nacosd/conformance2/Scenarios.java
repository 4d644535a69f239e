package nacosd.conformance2;

import com.alibaba.nacos.api.NacosFactory;
import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.config.ConfigService;
import com.alibaba.nacos.api.config.listener.AbstractListener;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.HttpURLConnection;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Conformance scenarios on the Nacos 2.x Java client, which talks gRPC to the server's HTTP port + 1000.
 *
 * <p>Usage: {@code Scenarios <host:port> <scenario|all|list>...}. Each scenario prints one line
 * {@code RESULT {"scenario":..,"ok":..,"ms":..,"detail":..}} on stdout (the protocol of javatest/client).
 * The auth scenarios read the user, password and a user without rights from the system properties
 * {@code conformance.user}, {@code conformance.password}, {@code conformance.user2},
 * {@code conformance.password2}. The process exits 0 when it ran every scenario, whatever their outcome.
 */
public final class Scenarios {

    static final class Fail extends Exception {
        Fail(String msg) {
            super(msg);
        }
    }

    record Outcome(long ms, String detail) {
    }

    interface Scenario {
        Outcome run() throws Exception;
    }

    private final String server;
    private final String run;
    private final List<ConfigService> clients = new ArrayList<>();
    /** Run after every scenario (NamingScenarios' clients and peer processes). */
    final List<Runnable> cleanups = new ArrayList<>();

    Scenarios(String server, String run) {
        this.server = server;
        this.run = run;
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: Scenarios <host:port> <scenario|all|list>...");
            System.exit(2);
        }
        Scenarios s = new Scenarios(args[0], Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36)
                + System.getProperty("conformance.tag", ""));
        Map<String, Scenario> all = s.scenarios();
        List<String> names = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("all")) {
                for (String n : all.keySet()) {
                    if (!n.startsWith("auth.")) {
                        names.add(n);
                    }
                }
            } else if (args[i].equals("auth")) {
                for (String n : all.keySet()) {
                    if (n.startsWith("auth.")) {
                        names.add(n);
                    }
                }
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

    static void result(String name, boolean ok, long ms, String detail) {
        System.out.println("RESULT {\"scenario\":" + q(name) + ",\"ok\":" + ok + ",\"ms\":" + ms
                + ",\"detail\":" + q(detail == null ? "" : detail) + "}");
        System.out.flush();
    }

    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
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
        for (ConfigService c : clients) {
            try {
                c.shutDown();
            } catch (Exception e) {
                // closing
            }
        }
        clients.clear();
        for (Runnable r : cleanups) {
            try {
                r.run();
            } catch (Exception e) {
                // closing
            }
        }
        cleanups.clear();
    }

    ConfigService config(Properties extra) throws Exception {
        Properties p = new Properties();
        p.setProperty(PropertyKeyConst.SERVER_ADDR, server);
        if (extra != null) {
            p.putAll(extra);
        }
        ConfigService c = NacosFactory.createConfigService(p);
        clients.add(c);
        return c;
    }

    ConfigService config() throws Exception {
        return config(null);
    }

    static Properties props(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i + 1 < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        return p;
    }

    static void check(boolean cond, String msg) throws Fail {
        if (!cond) {
            throw new Fail(msg);
        }
    }

    /** Polls f until it returns non-null or the timeout passes (Java's reads follow a dump). */
    static <T> T eventually(long timeoutMs, Supplier<T> f) throws InterruptedException {
        long end = System.currentTimeMillis() + timeoutMs;
        while (true) {
            T v = f.get();
            if (v != null || System.currentTimeMillis() > end) {
                return v;
            }
            Thread.sleep(50);
        }
    }

    static String get(ConfigService c, String dataId, String group, String want) throws InterruptedException {
        String got = eventually(3000, () -> {
            try {
                String v = c.getConfig(dataId, group, 3000);
                return want == null ? (v == null ? "" : null) : (want.equals(v) ? v : null);
            } catch (Exception e) {
                return null;
            }
        });
        if (got == null) {
            try {
                return c.getConfig(dataId, group, 3000);
            } catch (Exception e) {
                return "error " + e;
            }
        }
        return want == null ? null : got;
    }

    static Object worker(ConfigService c) throws Exception {
        Field f = c.getClass().getDeclaredField("worker");
        f.setAccessible(true);
        return f.get(c);
    }

    /** ClientWorker.publishConfig: the 2.x publish with tag, beta IPs, appName, casMd5 and type. */
    static boolean publishFull(ConfigService c, String dataId, String group, String tenant, String appName, String tag,
            String betaIps, String content, String casMd5, String type) throws Exception {
        Object w = worker(c);
        Method m = w.getClass().getMethod("publishConfig", String.class, String.class, String.class, String.class,
                String.class, String.class, String.class, String.class, String.class, String.class);
        return (Boolean) m.invoke(w, dataId, group, tenant, appName, tag, betaIps, content, null, casMd5, type);
    }

    static boolean removeTag(ConfigService c, String dataId, String group, String tenant, String tag) throws Exception {
        Object w = worker(c);
        Method m = w.getClass().getMethod("removeConfig", String.class, String.class, String.class, String.class);
        return (Boolean) m.invoke(w, dataId, group, tenant, tag);
    }

    /** ClientWorker.getServerConfig → ConfigResponse: content and config type. */
    static String[] serverConfig(ConfigService c, String dataId, String group, String tenant) throws Exception {
        Object w = worker(c);
        Method m = w.getClass().getMethod("getServerConfig", String.class, String.class, String.class, long.class,
                boolean.class);
        Object r = m.invoke(w, dataId, group, tenant, 3000L, false);
        String content = (String) r.getClass().getMethod("getContent").invoke(r);
        String type = (String) r.getClass().getMethod("getConfigType").invoke(r);
        return new String[] {content, type};
    }

    static String md5(String s) throws Exception {
        byte[] d = MessageDigest.getInstance("MD5").digest(s.getBytes(StandardCharsets.UTF_8));
        StringBuilder b = new StringBuilder();
        for (byte x : d) {
            b.append(String.format("%02x", x));
        }
        return b.toString();
    }

    /** One HTTP call to the 1.x API: returns "status body". */
    /**
     * GET path on the 1.x API until the answer contains want, at most 5 s: on a cluster that API is
     * another member's, which lists a 2.x registration after the Distro sync (Java's too).
     */
    String httpUntil(String path, String want) throws Exception {
        String h = http("GET", path, null);
        for (long end = System.currentTimeMillis() + 5000;
                !(h.startsWith("200") && h.contains(want)) && System.currentTimeMillis() < end; ) {
            Thread.sleep(100);
            h = http("GET", path, null);
        }
        return h;
    }

    String http(String method, String path, String form) throws Exception {
        // a cluster's server list: the 1.x API of its first member
        URL u = new URL("http://" + server.split(",")[0] + "/nacos" + path);
        HttpURLConnection c = (HttpURLConnection) u.openConnection();
        c.setRequestMethod(method);
        c.setConnectTimeout(3000);
        c.setReadTimeout(40000);
        if (form != null) {
            c.setDoOutput(true);
            c.setRequestProperty("Content-Type", "application/x-www-form-urlencoded");
            if (path.contains("/listener")) {
                c.setRequestProperty("Long-Pulling-Timeout", "30000");
            }
            try (OutputStream o = c.getOutputStream()) {
                o.write(form.getBytes(StandardCharsets.UTF_8));
            }
        }
        int st = c.getResponseCode();
        InputStream in = st >= 400 ? c.getErrorStream() : c.getInputStream();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        if (in != null) {
            in.transferTo(out);
        }
        return st + " " + out.toString(StandardCharsets.UTF_8);
    }

    /**
     * Creates a namespace over the 1.x API; "status body". Retried on a 500: Java 2.5.1's embedded
     * Derby answers "A lock could not be obtained" when several clients create namespaces at once.
     */
    String createNamespace(String ns) throws Exception {
        String r = "";
        for (int i = 0; i < 4; i++) {
            r = http("POST", "/v1/console/namespaces", "customNamespaceId=" + ns + "&namespaceName=" + ns);
            if (!r.startsWith("500")) {
                return r;
            }
            Thread.sleep(500);
        }
        return r;
    }

    static String enc(String s) throws Exception {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** A listener that queues every content it receives. */
    static final class Queue extends AbstractListener {
        final BlockingQueue<String> got = new LinkedBlockingQueue<>();

        @Override
        public void receiveConfigInfo(String configInfo) {
            got.add(configInfo == null ? "<null>" : configInfo);
        }

        String next(long ms) throws InterruptedException {
            return got.poll(ms, TimeUnit.MILLISECONDS);
        }
    }

    String server() {
        return server;
    }

    String run() {
        return run;
    }

    Map<String, Scenario> scenarios() {
        Map<String, Scenario> m = new LinkedHashMap<>();
        final String group = "G2";

        m.put("config.publish.get", () -> {
            ConfigService c = config();
            String d = "pg-" + run;
            check(c.publishConfig(d, group, "v1"), "publish returned false");
            String got = get(c, d, group, "v1");
            check("v1".equals(got), "get after publish: " + got);
            check(c.publishConfig(d, group, "v2"), "republish returned false");
            got = get(c, d, group, "v2");
            check("v2".equals(got), "get after republish: " + got);
            String none = c.getConfig("absent-" + run, group, 3000);
            check(none == null, "absent config: " + none);
            return new Outcome(-1, "content=" + got);
        });

        m.put("config.publish.type", () -> {
            ConfigService c = config();
            String d = "ty-" + run;
            check(c.publishConfig(d, group, "a: 1", "yaml"), "publish yaml returned false");
            get(c, d, group, "a: 1");
            String[] r = serverConfig(c, d, group, "");
            check("yaml".equals(r[1]), "type " + r[1]);
            String d2 = "ty2-" + run;
            check(c.publishConfig(d2, group, "x", "no-such-type"), "publish bad type returned false");
            get(c, d2, group, "x");
            String[] r2 = serverConfig(c, d2, group, "");
            return new Outcome(-1, "type=" + r[1] + " badType=" + r2[1]);
        });

        m.put("config.remove", () -> {
            ConfigService c = config();
            String d = "rm-" + run;
            check(c.publishConfig(d, group, "x"), "publish returned false");
            get(c, d, group, "x");
            check(c.removeConfig(d, group), "remove returned false");
            String got = get(c, d, group, null);
            check(got == null, "get after remove: " + got);
            check(c.removeConfig("absent-" + run, group), "remove of an absent config returned false");
            return new Outcome(-1, "");
        });

        m.put("config.listen.push", () -> {
            ConfigService c = config();
            ConfigService pub = config();
            String d = "ls-" + run;
            check(pub.publishConfig(d, group, "one"), "publish returned false");
            get(c, d, group, "one");
            Queue q = new Queue();
            c.addListener(d, group, q);
            Thread.sleep(500);
            long t0 = System.nanoTime();
            check(pub.publishConfig(d, group, "two"), "publish returned false");
            String got = q.next(15000);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            check("two".equals(got), "listener got " + got);
            check(pub.removeConfig(d, group), "remove returned false");
            String gone = q.next(15000);
            check("<null>".equals(gone), "listener after remove got " + gone);
            return new Outcome(ms, "got=" + got);
        });

        m.put("config.listen.idle", () -> {
            // a listener idle past the server's 20 s keep-alive (the client's health checks and
            // its answers to ClientDetectionRequest keep the connection) still gets the push
            ConfigService c = config();
            ConfigService pub = config();
            String d = "idle-" + run;
            Queue q = new Queue();
            c.addListener(d, group, q);
            Thread.sleep(25000);
            long t0 = System.nanoTime();
            check(pub.publishConfig(d, group, "after-idle"), "publish returned false");
            String got = q.next(15000);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            check("after-idle".equals(got), "listener after 25 s idle got " + got);
            return new Outcome(ms, "got=" + got);
        });

        m.put("config.listen.fromv1", () -> {
            // a 2.x listener is told of a 1.x HTTP publish
            ConfigService c = config();
            String d = "l1-" + run;
            Queue q = new Queue();
            c.addListener(d, group, q);
            Thread.sleep(500);
            long t0 = System.nanoTime();
            String r = http("POST", "/v1/cs/configs", "dataId=" + d + "&group=" + group + "&content=fromv1");
            check(r.startsWith("200"), "v1 publish: " + r);
            String got = q.next(15000);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            check("fromv1".equals(got), "listener got " + got);
            return new Outcome(ms, "got=" + got);
        });

        m.put("config.longpoll.fromv2", () -> {
            // a 1.x long poll wakes on a 2.x publish
            ConfigService c = config();
            String d = "lp-" + run;
            check(c.publishConfig(d, group, "a"), "publish returned false");
            get(c, d, group, "a");
            String probe = d + "\u0002" + group + "\u0002" + md5("a") + "\u0001";
            final String[] out = new String[1];
            Thread t = new Thread(() -> {
                try {
                    out[0] = http("POST", "/v1/cs/configs/listener", "Listening-Configs=" + enc(probe));
                } catch (Exception e) {
                    out[0] = "error " + e;
                }
            });
            t.start();
            Thread.sleep(1000);
            long t0 = System.nanoTime();
            check(c.publishConfig(d, group, "b"), "publish returned false");
            t.join(35000);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            check(out[0] != null && out[0].startsWith("200") && out[0].contains(d), "long poll answered " + out[0]);
            check(ms < 10000, "long poll woke after " + ms + " ms");
            return new Outcome(ms, "");
        });

        m.put("config.cas", () -> {
            ConfigService c = config();
            String d = "cas-" + run;
            check(c.publishConfigCas(d, group, "c1", "whatever"), "cas publish of an absent config returned false");
            get(c, d, group, "c1");
            boolean wrong = c.publishConfigCas(d, group, "c2", md5("not-c1"));
            check(!wrong, "cas publish with a wrong md5 returned true");
            check(c.publishConfigCas(d, group, "c3", md5("c1")), "cas publish with the right md5 returned false");
            String got = get(c, d, group, "c3");
            check("c3".equals(got), "after cas: " + got);
            return new Outcome(-1, "content=" + got);
        });

        m.put("config.beta", () -> {
            ConfigService c = config();
            String d = "beta-" + run;
            check(c.publishConfig(d, group, "main"), "publish returned false");
            get(c, d, group, "main");
            check(publishFull(c, d, group, "", null, null, "127.0.0.1", "beta", null, null), "beta publish returned false");
            String got = get(c, d, group, "beta");
            check("beta".equals(got), "a beta IP reads " + got);
            String other = d + "-other";
            check(c.publishConfig(other, group, "main2"), "publish returned false");
            check(publishFull(c, other, group, "", null, null, "10.9.9.9", "beta2", null, null), "beta publish returned false");
            Thread.sleep(300);
            String got2 = get(c, other, group, "main2");
            check("main2".equals(got2), "a non-beta IP reads " + got2);
            return new Outcome(-1, "beta=" + got + " other=" + got2);
        });

        m.put("config.tag", () -> {
            ConfigService c = config();
            String d = "tag-" + run;
            check(c.publishConfig(d, group, "main"), "publish returned false");
            check(publishFull(c, d, group, "", null, "t1", null, "tagged", null, null), "tag publish returned false");
            Thread.sleep(300);
            String got = get(c, d, group, "main");
            check("main".equals(got), "a client without the tag reads " + got);
            // ConfigRemoveRequest with the tag: Java 2.5.1 answers a NullPointerException
            // (conformance/java-defects.txt)
            boolean rm = removeTag(c, d, group, "", "t1");
            check(rm, "removing the tag variant answered false");
            return new Outcome(-1, "main=" + got);
        });

        m.put("config.appname", () -> {
            ConfigService c = config();
            String d = "app-" + run;
            check(publishFull(c, d, group, "", "myapp", null, null, "x", null, "json"), "publish returned false");
            get(c, d, group, "x");
            // the 1.x API of the first member: on a cluster it may apply the write a moment later
            String r = "";
            for (long end = System.currentTimeMillis() + 3000; System.currentTimeMillis() < end; Thread.sleep(100)) {
                r = http("GET", "/v1/cs/configs?show=all&dataId=" + d + "&group=" + group, null);
                if (r.contains("\"appName\":\"myapp\"")) {
                    break;
                }
            }
            check(r.contains("\"appName\":\"myapp\""), "show=all: " + r);
            check(r.contains("\"type\":\"json\""), "show=all type: " + r);
            return new Outcome(-1, "");
        });

        m.put("config.namespace", () -> {
            String ns = "ns2-" + run;
            String r = createNamespace(ns);
            check(r.startsWith("200"), "create namespace: " + r);
            ConfigService inNs = config(props(PropertyKeyConst.NAMESPACE, ns));
            ConfigService pub = config();
            String d = "ns-" + run;
            check(inNs.publishConfig(d, group, "in-ns"), "publish in namespace returned false");
            String got = get(inNs, d, group, "in-ns");
            check("in-ns".equals(got), "namespace read " + got);
            String outside = pub.getConfig(d, group, 3000);
            check(outside == null, "public namespace reads " + outside);
            // the 1.x API of the first member: on a cluster it may apply the write a moment later
            String hr = httpUntil("/v1/cs/configs?dataId=" + d + "&group=" + group + "&tenant=" + ns, "in-ns");
            check(hr.equals("200 in-ns"), "v1 read in namespace: " + hr);
            Queue q = new Queue();
            inNs.addListener(d, group, q);
            Thread.sleep(500);
            check(inNs.publishConfig(d, group, "in-ns-2"), "republish returned false");
            String pushed = q.next(15000);
            check("in-ns-2".equals(pushed), "namespace listener got " + pushed);
            return new Outcome(-1, "");
        });

        m.put("auth.config.ok", () -> {
            String user = System.getProperty("conformance.user", "nacos");
            String pw = System.getProperty("conformance.password", "nacos");
            ConfigService c = config(props(PropertyKeyConst.USERNAME, user, PropertyKeyConst.PASSWORD, pw));
            String d = "auth-" + run;
            check(c.publishConfig(d, group, "secret"), "publish as " + user + " returned false");
            String got = get(c, d, group, "secret");
            check("secret".equals(got), "read as " + user + ": " + got);
            Queue q = new Queue();
            c.addListener(d, group, q);
            Thread.sleep(500);
            check(c.publishConfig(d, group, "secret2"), "republish returned false");
            String pushed = q.next(15000);
            check("secret2".equals(pushed), "listener got " + pushed);
            check(c.removeConfig(d, group), "remove returned false");
            return new Outcome(-1, "");
        });

        m.put("auth.config.anonymous", () -> {
            ConfigService c = config();
            String d = "anon-" + run;
            boolean ok = c.publishConfig(d, group, "x");
            check(!ok, "anonymous publish returned true");
            String err;
            try {
                c.getConfig(d, group, 3000);
                err = "no error";
            } catch (Exception e) {
                err = e.getMessage();
            }
            check(!"no error".equals(err), "anonymous read had no error");
            return new Outcome(-1, "read: " + err);
        });

        m.put("auth.config.norights", () -> {
            String user = System.getProperty("conformance.user2", "");
            String pw = System.getProperty("conformance.password2", "");
            check(!user.isEmpty(), "no conformance.user2");
            ConfigService c = config(props(PropertyKeyConst.USERNAME, user, PropertyKeyConst.PASSWORD, pw));
            String d = "nr-" + run;
            boolean ok = c.publishConfig(d, group, "x");
            check(!ok, "publish without rights returned true");
            String err;
            try {
                c.getConfig(d, group, 3000);
                err = "no error";
            } catch (Exception e) {
                err = e.getMessage();
            }
            check(!"no error".equals(err), "read without rights had no error");
            return new Outcome(-1, "read: " + err);
        });
        m.putAll(new NamingScenarios(this).scenarios());
        return m;
    }
}
