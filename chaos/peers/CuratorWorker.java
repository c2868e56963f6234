import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * A chaos contender on Apache Curator 5.4, beside zklock's workers on the same lock paths and
 * reporting to the same fenced resource (chaos/worker.ts is the zklock twin; chaos/peers/
 * peer-process.ts starts this one). One session; loops until told to stop: acquire a lock picked
 * by a seeded Random, begin an operation on the resource, hold, end it, release.
 *
 * Argument: a JSON config {name, connect, seed, resourceUrl, sessionTimeout}. Control on stdin:
 * `stop` finishes the current hold and the loop, then prints {"type":"idle"}; `close` closes the
 * client and prints {"type":"stats",...}, then the process exits 0. Stdin EOF means the parent
 * died: the process ends at once, whatever it was doing. stderr is a free-form log.
 */
public final class CuratorWorker {
    // LOCKS in chaos/history.ts: Curator's layout, shared with zklock's default layout.
    private static final String[] MUTEXES = {"/chaos/mutex-a", "/chaos/mutex-b"};
    private static final String READ_WRITE = "/chaos/rw";
    private static final String SEMAPHORE = "/chaos/sem";
    private static final int SEMAPHORE_SIZE = 2;
    private static final String[] KINDS = {"mutex", "mutex", "read", "read", "write", "semaphore", "semaphore"};

    private static final long ACQUIRE_TIMEOUT_MS = 10_000;
    private static final int CONNECTION_TIMEOUT_MS = 15_000;
    private static final Duration RESOURCE_TIMEOUT = Duration.ofSeconds(5);
    private static final long CLOSE_TIMEOUT_MS = 5_000;
    /** After stdin EOF: how long the main thread may take to notice before the process halts anyway. */
    private static final long EOF_GRACE_MS = 10_000;

    private final Config config;
    private final String worker;
    private final Random random;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(RESOURCE_TIMEOUT).build();
    private final Map<String, Integer> acquireErrors = new TreeMap<>();
    private int acquisitions;
    private volatile boolean stopping;
    private final CountDownLatch closeRequested = new CountDownLatch(1);

    private CuratorWorker(Config config) {
        this.config = config;
        this.worker = config.name + ".1";
        this.random = new Random(config.seed);
    }

    public static void main(String[] args) {
        CuratorWorker worker = new CuratorWorker(Config.parse(args[0]));
        worker.watchStdin(Thread.currentThread());
        System.exit(worker.run());
    }

    private interface Release {
        void run() throws Exception;
    }

    /** A held lock: the lock path the resource fences, and the contender or lease node that holds it. */
    private record Hold(String lock, String node, Release release) {}

    // Curator keeps a mutex's own node behind the protected getLockPath(); these subclasses reach it.
    private static final class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework client, String path) {
            super(client, path);
        }

        String ownNode() {
            return getLockPath();
        }
    }

    private static final class WriteMutex extends InterProcessReadWriteLock.WriteLock {
        WriteMutex(CuratorFramework client, String path) {
            super(client, path, null);
        }

        String ownNode() {
            return getLockPath();
        }
    }

    private static final class ReadMutex extends InterProcessReadWriteLock.ReadLock {
        ReadMutex(CuratorFramework client, String path, WriteMutex writer) {
            super(client, path, null, writer);
        }

        String ownNode() {
            return getLockPath();
        }
    }

    private int run() {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(config.connect)
                .sessionTimeoutMs(config.sessionTimeout)
                .connectionTimeoutMs(CONNECTION_TIMEOUT_MS)
                // Bounded, so a release during a long outage gives up and the loop goes on.
                .retryPolicy(new BoundedExponentialBackoffRetry(100, 1_000, 3))
                .build();
        client.start();
        try {
            if (!client.blockUntilConnected(CONNECTION_TIMEOUT_MS * 2, TimeUnit.MILLISECONDS)) {
                log("no connection to " + config.connect);
                return 1;
            }
            loop(client);
            emit("{\"type\":\"idle\"}");
            closeRequested.await();
        } catch (InterruptedException e) {
            log("stdin closed: ending now");
        } finally {
            closeBounded(client);
        }
        emit("{\"type\":\"stats\",\"stats\":{\"name\":" + quote(config.name) + ",\"acquisitions\":" + acquisitions
                + ",\"acquireErrors\":" + errorsJson() + "}}");
        return 0;
    }

    private void loop(CuratorFramework client) throws InterruptedException {
        Mutex[] mutexes = {new Mutex(client, MUTEXES[0]), new Mutex(client, MUTEXES[1])};
        // What new InterProcessReadWriteLock(client, path) builds, from subclasses that show their nodes.
        WriteMutex writer = new WriteMutex(client, READ_WRITE);
        ReadMutex reader = new ReadMutex(client, READ_WRITE, writer);
        InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, SEMAPHORE, SEMAPHORE_SIZE);
        int n = 0;
        while (!stopping) {
            String kind = KINDS[random.nextInt(KINDS.length)];
            Hold hold;
            String error = "LOCK_TIMEOUT";
            try {
                hold = switch (kind) {
                    case "mutex" -> {
                        int i = random.nextInt(mutexes.length);
                        Mutex mutex = mutexes[i];
                        yield mutex.acquire(ACQUIRE_TIMEOUT_MS, TimeUnit.MILLISECONDS) ? new Hold(MUTEXES[i], mutex.ownNode(), mutex::release) : null;
                    }
                    case "read" -> reader.acquire(ACQUIRE_TIMEOUT_MS, TimeUnit.MILLISECONDS) ? new Hold(READ_WRITE, reader.ownNode(), reader::release) : null;
                    case "write" -> writer.acquire(ACQUIRE_TIMEOUT_MS, TimeUnit.MILLISECONDS) ? new Hold(READ_WRITE, writer.ownNode(), writer::release) : null;
                    default -> {
                        Lease lease = semaphore.acquire(ACQUIRE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                        yield lease == null ? null : new Hold(SEMAPHORE, ZKPaths.makePath(SEMAPHORE, "leases", lease.getNodeName()), lease::close);
                    }
                };
            } catch (Exception e) {
                throwIfInterrupted(e);
                hold = null;
                error = e instanceof KeeperException k ? k.code().name() : e.getClass().getSimpleName();
            }
            if (hold == null) {
                countError(error);
                Thread.sleep(100 + random.nextInt(200));
                continue;
            }
            double acquiredAt = System.nanoTime() / 1e6;
            String session = sessionOf(client);
            Stat stat = nodeStat(client, hold.node());
            if (stat == null) {
                // The node went with the session before we could read its token: nothing is held.
                countError("NONODE");
            } else {
                acquisitions++;
                String locks = "[{\"lock\":" + quote(hold.lock()) + ",\"token\":" + quote(Long.toString(stat.getCzxid()))
                        + ",\"fenced\":" + (kind.equals("mutex") || kind.equals("write")) + "}]";
                operate(worker + "#" + ++n, kind, locks, session, acquiredAt, 20 + random.nextInt(131));
            }
            release(hold);
            Thread.sleep(random.nextInt(50));
        }
    }

    /** Hex like BigInt.toString(16) on our side, so the same session reads the same in every language. */
    private static String sessionOf(CuratorFramework client) {
        try {
            return Long.toString(client.getZookeeperClient().getZooKeeper().getSessionId(), 16);
        } catch (Exception e) {
            return "unknown";
        }
    }

    private Stat nodeStat(CuratorFramework client, String node) throws InterruptedException {
        try {
            return client.checkExists().forPath(node);
        } catch (Exception e) {
            throwIfInterrupted(e);
            log("reading " + node + ": " + e);
            return null;
        }
    }

    private void operate(String id, String kind, String locks, String session, double acquiredAt, int holdMs) throws InterruptedException {
        String begin = "{\"id\":" + quote(id) + ",\"worker\":" + quote(worker) + ",\"process\":" + quote(config.name)
                + ",\"kind\":" + quote(kind) + ",\"locks\":" + locks + ",\"language\":\"curator\",\"session\":" + quote(session)
                + ",\"acquiredAt\":" + acquiredAt + ",\"holdMs\":" + holdMs + "}";
        try {
            if (post("/begin", begin).contains("\"accepted\":true")) Thread.sleep(holdMs);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            log("begin " + id + ": " + e);
        }
        try {
            post("/end", "{\"id\":" + quote(id) + "}");
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            log("end " + id + ": " + e);
        }
    }

    private void release(Hold hold) throws InterruptedException {
        try {
            hold.release().run();
        } catch (Exception e) {
            // The retry policy bounds this; the leak check finds a node left behind.
            throwIfInterrupted(e);
            log("releasing " + hold.node() + ": " + e);
        }
    }

    private String post(String path, String json) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(config.resourceUrl + path))
                .timeout(RESOURCE_TIMEOUT)
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString()).body();
    }

    /** Curator passes an interrupt on as any exception (with the flag set again): stdin EOF, so stop at once. */
    private static void throwIfInterrupted(Exception e) throws InterruptedException {
        if (e instanceof InterruptedException || Thread.interrupted()) throw new InterruptedException("stdin closed");
    }

    private void countError(String code) {
        acquireErrors.merge(code, 1, Integer::sum);
    }

    private String errorsJson() {
        StringBuilder json = new StringBuilder("{");
        for (Map.Entry<String, Integer> entry : acquireErrors.entrySet()) {
            if (json.length() > 1) json.append(',');
            json.append(quote(entry.getKey())).append(':').append(entry.getValue());
        }
        return json.append('}').toString();
    }

    /** Closes the client in a thread of its own: ZooKeeper's close waits for a server that may be gone. */
    private void closeBounded(CuratorFramework client) {
        Thread.interrupted();
        Thread closer = new Thread(client::close, "close");
        closer.setDaemon(true);
        closer.start();
        try {
            closer.join(CLOSE_TIMEOUT_MS);
        } catch (InterruptedException e) {
            log("close interrupted");
        }
    }

    /** `stop` and `close` lines; EOF interrupts the main thread and halts the process if that is not enough. */
    private void watchStdin(Thread main) {
        Thread watcher = new Thread(() -> {
            boolean eof = true;
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    if (line.trim().equals("stop")) stopping = true;
                    if (line.trim().equals("close")) {
                        eof = false;
                        break;
                    }
                }
            } catch (Exception e) {
                log("stdin: " + e);
            }
            stopping = true;
            closeRequested.countDown();
            if (!eof) return;
            main.interrupt();
            try {
                Thread.sleep(EOF_GRACE_MS);
            } catch (InterruptedException e) {
                // Halting now is what the sleep was for.
            }
            log("main thread still running " + EOF_GRACE_MS + " ms after stdin closed: halting");
            Runtime.getRuntime().halt(0);
        }, "stdin");
        watcher.setDaemon(true);
        watcher.start();
    }

    private static synchronized void emit(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private void log(String message) {
        System.err.println("[" + config.name + " curator] " + message);
    }

    private static String quote(String value) {
        StringBuilder json = new StringBuilder("\"");
        for (char c : value.toCharArray()) {
            if (c == '"' || c == '\\') json.append('\\').append(c);
            else if (c < 0x20) json.append(String.format("\\u%04x", (int) c));
            else json.append(c);
        }
        return json.append('"').toString();
    }

    /** The config, from the JSON that JSON.stringify wrote: flat, and its strings (names, host:port lists, URLs) need no escapes. */
    private record Config(String name, String connect, long seed, String resourceUrl, int sessionTimeout) {
        static Config parse(String json) {
            return new Config(string(json, "name"), string(json, "connect"), (long) number(json, "seed"), string(json, "resourceUrl"), (int) number(json, "sessionTimeout"));
        }

        private static String string(String json, String key) {
            String value = field(json, key, "\"([^\"]*)\"");
            if (value.contains("\\")) throw new IllegalArgumentException("config " + key + " has an escape, which this reader does not decode: " + value);
            return value;
        }

        private static double number(String json, String key) {
            return Double.parseDouble(field(json, key, "(-?[0-9.eE+-]+)"));
        }

        private static String field(String json, String key, String value) {
            Matcher match = Pattern.compile("\"" + key + "\"\\s*:\\s*" + value).matcher(json);
            if (!match.find()) throw new IllegalArgumentException("config has no " + key + ": " + json);
            return match.group(1);
        }
    }
}
