package nacosd.conformance;

import com.alibaba.nacos.api.NacosFactory;
import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.config.ConfigService;
import com.alibaba.nacos.api.config.listener.AbstractListener;
import com.alibaba.nacos.api.exception.NacosException;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import com.alibaba.nacos.api.naming.pojo.Instance;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Auth scenarios on the raw Java Nacos 1.4.8 client with username/password set, against a server
 * with nacos.core.auth.enabled=true and a short token lifetime.
 *
 * <p>Usage: {@code AuthScenarios <host:port> <namespace> <user> <password> <readUser> <readPassword>
 * <badUser> <tokenTtlSeconds> <scenario|all>...}. The user has rw on the namespace, the read user r
 * only; the bad user exists, and the wrong-password scenario logs in as it with a wrong password.
 * Each scenario prints one {@code RESULT {...}} line as {@link Scenarios} does; the process exits 0
 * when it ran them all.
 */
public final class AuthScenarios {

    interface Scenario {
        Scenarios.Outcome run() throws Exception;
    }

    private final String server;
    private final String namespace;
    private final String user;
    private final String password;
    private final String readUser;
    private final String readPassword;
    private final String badUser;
    private final int ttl;
    private final String run = Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36);
    private final List<Runnable> closers = new ArrayList<>();

    AuthScenarios(String[] a) {
        server = a[0];
        namespace = a[1];
        user = a[2];
        password = a[3];
        readUser = a[4];
        readPassword = a[5];
        badUser = a[6];
        ttl = Integer.parseInt(a[7]);
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 9) {
            System.err.println("usage: AuthScenarios <host:port> <namespace> <user> <password> <readUser> <readPassword> <badUser> <ttl> <scenario|all>...");
            System.exit(2);
        }
        System.setProperty("com.alibaba.nacos.client.naming.local.ip", "127.0.0.1");
        AuthScenarios s = new AuthScenarios(args);
        Map<String, Scenario> all = s.scenarios();
        List<String> names = new ArrayList<>();
        for (int i = 8; i < args.length; i++) {
            if (args[i].equals("all")) {
                names.addAll(all.keySet());
            } else {
                names.add(args[i]);
            }
        }
        for (String n : names) {
            Scenario sc = all.get(n);
            if (sc == null) {
                Scenarios.result(n, false, -1, "unknown scenario");
                continue;
            }
            long start = System.nanoTime();
            try {
                Scenarios.Outcome o = sc.run();
                Scenarios.result(n, true, o.ms(), o.detail());
            } catch (Scenarios.Fail f) {
                Scenarios.result(n, false, -1, f.getMessage());
            } catch (Throwable t) {
                Scenarios.result(n, false, -1, t.toString());
            } finally {
                s.closeAll();
                System.err.printf("scenario %s took %d ms%n", n, (System.nanoTime() - start) / 1_000_000);
            }
        }
        System.exit(0);
    }

    Map<String, Scenario> scenarios() {
        Map<String, Scenario> m = new LinkedHashMap<>();
        m.put("login", this::login);
        m.put("badpassword", this::badPassword);
        m.put("readonly", this::readOnly);
        m.put("expiry", this::expiry);
        return m;
    }

    void closeAll() {
        for (int i = closers.size() - 1; i >= 0; i--) {
            try {
                closers.get(i).run();
            } catch (RuntimeException ignored) {
                // best effort
            }
        }
        closers.clear();
    }

    Properties props(String u, String p) {
        Properties pr = new Properties();
        pr.setProperty(PropertyKeyConst.SERVER_ADDR, server);
        pr.setProperty(PropertyKeyConst.NAMESPACE, namespace);
        pr.setProperty(PropertyKeyConst.USERNAME, u);
        pr.setProperty(PropertyKeyConst.PASSWORD, p);
        return pr;
    }

    ConfigService config(String u, String p) throws NacosException {
        ConfigService c = NacosFactory.createConfigService(props(u, p));
        closers.add(() -> {
            try {
                c.shutDown();
            } catch (NacosException ignored) {
                // best effort
            }
        });
        return c;
    }

    NamingService naming(String u, String p) throws NacosException {
        NamingService n = NacosFactory.createNamingService(props(u, p));
        closers.add(() -> {
            try {
                n.shutDown();
            } catch (NacosException ignored) {
                // best effort
            }
        });
        return n;
    }

    String id(String base) {
        return "auth." + base + "." + run;
    }

    static Instance inst(String ip, int port) {
        Instance i = new Instance();
        i.setIp(ip);
        i.setPort(port);
        return i;
    }

    /**
     * The first writes of a fresh client are retried for 20 s: its login at creation may have timed
     * out on a loaded server, and the client logs in again every 5 s (apps retry the same way).
     */
    static void publish(ConfigService c, String dataId, String content) throws Scenarios.Fail {
        Scenarios.eventually(20000, Scenarios.unchecked(() -> c.publishConfig(dataId, "DEFAULT_GROUP", content) ? null : "publishConfig answered false"));
    }

    static void register(NamingService n, String svc, int port) throws Scenarios.Fail {
        Scenarios.eventually(20000, Scenarios.unchecked(() -> {
            n.registerInstance(svc, "127.0.0.1", port);
            return null;
        }));
    }

    /** publishConfig refused: false or a NacosException (the client's answer to a 403). */
    static String publishRefused(ConfigService c, String dataId) {
        try {
            return c.publishConfig(dataId, "DEFAULT_GROUP", "x") ? "publish answered true" : null;
        } catch (NacosException e) {
            return null;
        }
    }

    /** 403 as Java; 429 once nacosd's login throttle locked a failing user out. */
    static boolean refusal(int code) {
        return code == 403 || code == 429;
    }

    static String registerRefused(NamingService n, String svc) {
        try {
            n.registerInstance(svc, "127.0.0.1", 19999);
            return "register succeeded";
        } catch (NacosException e) {
            return refusal(e.getErrCode()) ? null : "register failed with " + e.getErrCode() + ": " + e.getErrMsg();
        }
    }

    /** Config and naming work with the logged-in user's token. */
    Scenarios.Outcome login() throws Exception {
        long t0 = System.nanoTime();
        ConfigService c = config(user, password);
        NamingService n = naming(user, password);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        String d = id("login");
        publish(c, d, "v1");
        Scenarios.eventually(5000, Scenarios.unchecked(() -> "v1".equals(c.getConfig(d, "DEFAULT_GROUP", 3000)) ? null : "config not readable"));
        String s = id("login");
        register(n, s, 19001);
        Scenarios.eventually(5000, Scenarios.unchecked(() -> n.getAllInstances(s, false).size() == 1 ? null : "instance not listed"));
        n.deregisterInstance(s, "127.0.0.1", 19001);
        Scenarios.check(c.removeConfig(d, "DEFAULT_GROUP"), "removeConfig answered false");
        return new Scenarios.Outcome(ms, "clients created (login) in namespace " + namespace);
    }

    /** A wrong password: every call is refused (no token, the server answers 403). */
    Scenarios.Outcome badPassword() throws Exception {
        ConfigService c = config(badUser, "not-the-password");
        NamingService n = naming(badUser, "not-the-password");
        String why = publishRefused(c, id("bad"));
        Scenarios.check(why == null, "wrong password: " + why);
        why = registerRefused(n, id("bad"));
        Scenarios.check(why == null, "wrong password: " + why);
        try {
            String v = c.getConfig(id("bad"), "DEFAULT_GROUP", 3000);
            throw new Scenarios.Fail("wrong password: getConfig answered " + v);
        } catch (NacosException e) {
            Scenarios.check(refusal(e.getErrCode()), "wrong password: getConfig failed with " + e.getErrCode());
        }
        return new Scenarios.Outcome(-1, "publish, register and read refused (403)");
    }

    /** A user with r only: reads work, writes are refused. */
    Scenarios.Outcome readOnly() throws Exception {
        ConfigService rw = config(user, password);
        String d = id("ro");
        publish(rw, d, "visible");
        ConfigService c = config(readUser, readPassword);
        NamingService n = naming(readUser, readPassword);
        Scenarios.eventually(5000, Scenarios.unchecked(() -> "visible".equals(c.getConfig(d, "DEFAULT_GROUP", 3000)) ? null : "config not readable"));
        String why = publishRefused(c, d);
        Scenarios.check(why == null, "read-only user: " + why);
        why = registerRefused(n, id("ro"));
        Scenarios.check(why == null, "read-only user: " + why);
        n.getAllInstances(id("ro"), false); // reading is allowed
        rw.removeConfig(d, "DEFAULT_GROUP");
        return new Scenarios.Outcome(-1, "read allowed; publish and register refused");
    }

    /**
     * The clients keep working across a token expiry: an instance registered before stays
     * healthy (its beats carry refreshed tokens), a listener and a subscription made before see
     * changes made after, and writes after the first token's lifetime succeed.
     */
    Scenarios.Outcome expiry() throws Exception {
        ConfigService c = config(user, password);
        NamingService n = naming(user, password);
        NamingService sub = naming(user, password);
        String d = id("exp");
        String kept = id("exp.kept");
        String watched = id("exp.watched");
        BlockingQueue<String> changes = new LinkedBlockingQueue<>();
        c.addListener(d, "DEFAULT_GROUP", new AbstractListener() {
            @Override
            public void receiveConfigInfo(String info) {
                changes.add(info);
            }
        });
        // Java registers a subscriber for pushes only when the service
        // exists at its query: one instance first, as apps find it
        register(n, watched, 19004);
        Scenarios.eventually(5000, Scenarios.unchecked(() -> n.getAllInstances(watched, false).size() == 1 ? null : "watched not listed"));
        List<List<Instance>> events = new CopyOnWriteArrayList<>();
        sub.subscribe(watched, e -> {
            if (e instanceof NamingEvent ne) {
                events.add(ne.getInstances());
            }
        });
        register(n, kept, 19002);
        publish(c, d, "before");
        String first = changes.poll(15, TimeUnit.SECONDS);
        Scenarios.check("before".equals(first), "listener before expiry got " + first);

        // past the first token's lifetime, long enough that an instance whose
        // beats were refused since the expiry would be unhealthy (15 s)
        long wait = ttl + 20L;
        Thread.sleep(wait * 1000);

        long t0 = System.nanoTime();
        Scenarios.check(c.publishConfig(d, "DEFAULT_GROUP", "after"), "publish after expiry answered false");
        String second = changes.poll(15, TimeUnit.SECONDS);
        Scenarios.check("after".equals(second), "listener after expiry got " + second);
        Scenarios.check("after".equals(c.getConfig(d, "DEFAULT_GROUP", 3000)), "getConfig after expiry");
        List<Instance> l = n.getAllInstances(kept, false);
        Scenarios.check(l.size() == 1 && l.get(0).isHealthy(), "instance registered before expiry: " + Scenarios.describe(l));
        n.registerInstance(watched, "127.0.0.1", 19003);
        Scenarios.eventually(15000, () -> {
            for (List<Instance> ev : events) {
                if (ev.size() == 2) {
                    return null;
                }
            }
            return "subscriber saw " + events.size() + " events, none with the new instance";
        });
        long ms = (System.nanoTime() - t0) / 1_000_000;
        n.deregisterInstance(kept, "127.0.0.1", 19002);
        n.deregisterInstance(watched, "127.0.0.1", 19003);
        n.deregisterInstance(watched, "127.0.0.1", 19004);
        c.removeConfig(d, "DEFAULT_GROUP");
        return new Scenarios.Outcome(ms, "writes, listener, subscription and beats work " + wait + " s after login (token ttl " + ttl + " s)");
    }
}
