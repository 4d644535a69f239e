package nacosd.conformance2;

import com.alibaba.nacos.api.NacosFactory;
import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import com.alibaba.nacos.api.naming.pojo.Instance;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * A naming client driven line by line over stdin, so that another program (a scenario of the
 * conformance suite, or the harness itself) can hold an instance in a separate process, kill it, or
 * put a client of another generation on the same service. This one is the Nacos 2.x client (gRPC).
 *
 * <p>Usage: {@code Peer <host:port[,…]> [namespace]}; prints {@code READY}, then answers each
 * command with one line {@code OK …} or {@code ERR …}:
 * <pre>
 * register &lt;service&gt; &lt;group&gt; &lt;ip&gt; &lt;port&gt; [k=v,…]   ephemeral instance, DEFAULT cluster
 * deregister &lt;service&gt; &lt;group&gt; &lt;ip&gt; &lt;port&gt;
 * list &lt;service&gt; &lt;group&gt;                     OK ip:port[:healthy:weight:k=v;…],… (getAllInstances)
 * subscribe &lt;service&gt; &lt;group&gt;                then EVENT &lt;service&gt; ip:port,… on every change
 * quit                                      exits at once (no deregistration)
 * </pre>
 */
public final class Peer {

    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.setProperty(PropertyKeyConst.SERVER_ADDR, args[0]);
        if (args.length > 1 && !args[1].isEmpty()) {
            p.setProperty(PropertyKeyConst.NAMESPACE, args[1]);
        }
        NamingService ns = NacosFactory.createNamingService(p);
        say("READY");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.trim().split(" ");
            try {
                switch (f[0]) {
                    case "register" -> {
                        Instance i = new Instance();
                        i.setIp(f[3]);
                        i.setPort(Integer.parseInt(f[4]));
                        if (f.length > 5) {
                            Map<String, String> md = new HashMap<>();
                            for (String kv : f[5].split(",")) {
                                String[] x = kv.split("=", 2);
                                md.put(x[0], x.length > 1 ? x[1] : "");
                            }
                            i.setMetadata(md);
                        }
                        ns.registerInstance(f[1], f[2], i);
                        say("OK");
                    }
                    case "deregister" -> {
                        ns.deregisterInstance(f[1], f[2], f[3], Integer.parseInt(f[4]));
                        say("OK");
                    }
                    case "list" -> say("OK " + describe(ns.getAllInstances(f[1], f[2], new ArrayList<>(), false), true));
                    case "subscribe" -> {
                        String svc = f[1];
                        ns.subscribe(f[1], f[2], e -> {
                            if (e instanceof NamingEvent) {
                                say("EVENT " + svc + " " + describe(((NamingEvent) e).getInstances(), false));
                            }
                        });
                        say("OK");
                    }
                    case "quit" -> {
                        // no shutDown (a 1.4.8 client takes seconds to stop its executors): the
                        // process ends, its connections close
                        say("OK");
                        Runtime.getRuntime().halt(0);
                    }
                    default -> say("ERR unknown command " + f[0]);
                }
            } catch (Exception e) {
                say("ERR " + e.toString().replace('\n', ' '));
            }
        }
        System.exit(0);
    }

    static String describe(List<Instance> l, boolean full) {
        StringBuilder b = new StringBuilder();
        for (Instance i : l) {
            if (b.length() > 0) {
                b.append(',');
            }
            b.append(i.getIp()).append(':').append(i.getPort());
            if (full) {
                b.append(':').append(i.isHealthy()).append(':').append(i.getWeight()).append(':');
                List<String> kv = new ArrayList<>();
                i.getMetadata().forEach((k, v) -> kv.add(k + "=" + v));
                b.append(String.join(";", kv));
            }
        }
        return b.toString();
    }

    static synchronized void say(String s) {
        System.out.println(s);
        System.out.flush();
    }
}
