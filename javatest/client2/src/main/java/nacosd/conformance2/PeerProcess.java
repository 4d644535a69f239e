package nacosd.conformance2;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A naming client in a JVM of its own ({@code Peer} of this module, or javatest/client's 1.x
 * {@code nacosd.conformance.Peer} on the classpath given by -Dconformance.v1cp), driven over its
 * stdin: a client that can be killed, or a client of the other generation.
 */
final class PeerProcess implements AutoCloseable {
    private final Process proc;
    private final Writer in;
    private final BlockingQueue<String> replies = new LinkedBlockingQueue<>();
    /** EVENT lines: "EVENT service ip:port,…". */
    final BlockingQueue<String> events = new LinkedBlockingQueue<>();

    private PeerProcess(Process proc) {
        this.proc = proc;
        this.in = new OutputStreamWriter(proc.getOutputStream(), StandardCharsets.UTF_8);
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    (line.startsWith("EVENT ") ? events : replies).add(line);
                }
            } catch (Exception e) {
                // the process ended
            }
            replies.add("EOF");
        });
        t.setDaemon(true);
        t.start();
    }

    /** Starts a 2.x peer (this module's classpath). */
    static PeerProcess v2(String server, String namespace, String logDir) throws Exception {
        return start(System.getProperty("java.class.path"), "nacosd.conformance2.Peer", server, namespace, logDir);
    }

    /** Starts a nacos-client 1.4.8 peer (javatest/client, -Dconformance.v1cp). */
    static PeerProcess v1(String server, String namespace, String logDir) throws Exception {
        String cp = System.getProperty("conformance.v1cp", "");
        if (cp.isEmpty()) {
            throw new Scenarios.Fail("no -Dconformance.v1cp (the classpath of javatest/client)");
        }
        return start(cp, "nacosd.conformance.Peer", server, namespace, logDir);
    }

    private static PeerProcess start(String cp, String main, String server, String namespace, String logDir)
            throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx96m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-Xss512k", "-DJM.LOG.PATH=" + logDir + "/logs", "-DJM.SNAPSHOT.PATH=" + logDir,
                "-Dcom.alibaba.nacos.client.naming.local.ip=127.0.0.1",
                "-Dcom.alibaba.nacos.client.local.ip=127.0.0.1", "-Dproject.name=conformance-peer", "-cp", cp, main,
                server, namespace == null ? "" : namespace));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.redirectError(new File(logDir + ".stderr"));
        new File(logDir).mkdirs();
        PeerProcess p = new PeerProcess(pb.start());
        String ready = p.replies.poll(60, TimeUnit.SECONDS);
        if (!"READY".equals(ready)) {
            p.kill();
            throw new Scenarios.Fail("peer " + main + " did not start: " + ready + " (see " + logDir + ".stderr)");
        }
        return p;
    }

    /** Sends one command and returns its answer after "OK" ("" for a bare OK); ERR fails. */
    String call(String command) throws Exception {
        in.write(command + "\n");
        in.flush();
        String r = replies.poll(30, TimeUnit.SECONDS);
        if (r == null || !r.startsWith("OK")) {
            throw new Scenarios.Fail("peer " + command + ": " + r);
        }
        return r.length() > 3 ? r.substring(3) : "";
    }

    /** Waits for an EVENT whose instance list satisfies want; returns its list or null. */
    String awaitEvent(long ms, java.util.function.Predicate<String> want) throws InterruptedException {
        long end = System.currentTimeMillis() + ms;
        while (true) {
            long left = end - System.currentTimeMillis();
            if (left <= 0) {
                return null;
            }
            String e = events.poll(left, TimeUnit.MILLISECONDS);
            if (e == null) {
                return null;
            }
            String[] f = e.split(" ", 3);
            String list = f.length > 2 ? f[2] : "";
            if (want.test(list)) {
                return list;
            }
        }
    }

    /** SIGKILL: the client dies without a word, as a crashed app does. */
    void kill() throws InterruptedException {
        proc.destroyForcibly();
        proc.waitFor(10, TimeUnit.SECONDS);
    }

    long pid() {
        return proc.pid();
    }

    @Override
    public void close() throws InterruptedException {
        if (proc.isAlive()) {
            try {
                in.write("quit\n");
                in.flush();
            } catch (Exception e) {
                // gone already
            }
            if (!proc.waitFor(10, TimeUnit.SECONDS)) {
                kill();
            }
        }
    }
}
