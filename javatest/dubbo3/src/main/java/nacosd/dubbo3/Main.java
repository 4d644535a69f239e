package nacosd.dubbo3;

import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * Dubbo 3.2 on a nacos:// registry (nacos-client 2.x over gRPC) for the conformance suite's 2.x axis.
 * The registry also serves as Dubbo's config center and metadata report (Dubbo 3's default), so the
 * provider publishes its interface-to-application mapping as a Nacos config.
 *
 * <pre>
 * Main provider &lt;host:port[,…]&gt; &lt;namespace&gt; &lt;dubboPort&gt;   prints READY, serves until stdin closes
 * Main consumer &lt;host:port[,…]&gt; &lt;namespace&gt;                 prints RESULT discover.call, then
 *     PHASE stop-provider; after a line on stdin, RESULT provider.gone
 * </pre>
 */
public final class Main {

    /** The provider's implementation. */
    static final class DemoServiceImpl implements DemoService {
        private final int port;

        DemoServiceImpl(int port) {
            this.port = port;
        }

        @Override
        public String sayHello(String name) {
            return "hello " + name + " from " + port;
        }
    }

    static ApplicationConfig application(String name) {
        ApplicationConfig app = new ApplicationConfig(name);
        app.setQosEnable(false); // every Dubbo process would bind 22222
        return app;
    }

    public static void main(String[] args) throws Exception {
        String role = args[0];
        // a server list "a:p,b:p,…": the first is the registry's address, the others its backups
        String[] servers = args[1].split(",", 2);
        String registry = "nacos://" + servers[0] + "?namespace=" + args[2]
                + (servers.length > 1 ? "&backup=" + servers[1] : "");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        RegistryConfig reg = new RegistryConfig(registry);
        if (role.equals("provider")) {
            int port = Integer.parseInt(args[3]);
            ServiceConfig<DemoService> svc = new ServiceConfig<>();
            svc.setInterface(DemoService.class);
            svc.setRef(new DemoServiceImpl(port));
            ProtocolConfig proto = new ProtocolConfig("dubbo", port);
            proto.setHost("127.0.0.1");
            DubboBootstrap.getInstance()
                    .application(application("nacosd-dubbo3-provider"))
                    .registry(reg)
                    .protocol(proto)
                    .service(svc)
                    .start();
            System.out.println("READY");
            System.out.flush();
            while (in.readLine() != null) {
                // serve until stdin closes
            }
            DubboBootstrap.getInstance().stop();
            System.exit(0);
        }
        ReferenceConfig<DemoService> ref = new ReferenceConfig<>();
        ref.setInterface(DemoService.class);
        ref.setCheck(false);
        ref.setTimeout(3000);
        ref.setRetries(0);
        DubboBootstrap.getInstance()
                .application(application("nacosd-dubbo3-consumer"))
                .registry(reg)
                .reference(ref)
                .start();
        DemoService demo = ref.get();
        long t0 = System.nanoTime();
        String last = "";
        boolean ok = false;
        while ((System.nanoTime() - t0) / 1_000_000 < 30000) {
            try {
                last = demo.sayHello("conformance");
                ok = last.startsWith("hello conformance from ");
                if (ok) {
                    break;
                }
            } catch (RuntimeException e) {
                last = e.getClass().getSimpleName() + ": " + e.getMessage();
            }
            Thread.sleep(200);
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        result("discover.call", ok, ok ? ms : -1, last);
        if (!ok) {
            System.exit(0);
        }
        System.out.println("PHASE stop-provider");
        System.out.flush();
        in.readLine();
        t0 = System.nanoTime();
        ok = false;
        while ((System.nanoTime() - t0) / 1_000_000 < 30000) {
            try {
                last = demo.sayHello("conformance");
            } catch (RuntimeException e) {
                last = e.getClass().getSimpleName() + ": " + e.getMessage();
                if (last.contains("No provider available")) {
                    ok = true;
                    break;
                }
            }
            Thread.sleep(100);
        }
        ms = (System.nanoTime() - t0) / 1_000_000;
        result("provider.gone", ok, ok ? ms : -1, ok ? "consumer saw the provider leave" : last);
        System.exit(0);
    }

    static void result(String name, boolean ok, long ms, String detail) {
        String d = detail == null ? "" : detail.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ");
        if (d.length() > 300) {
            d = d.substring(0, 300);
        }
        System.out.println("RESULT {\"scenario\":\"" + name + "\",\"ok\":" + ok + ",\"ms\":" + ms + ",\"detail\":\"" + d + "\"}");
        System.out.flush();
    }
}
