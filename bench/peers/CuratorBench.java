import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.client.FourLetterWordMain;

/**
 * The Curator 5.4 side of `npm run bench` (bench/peers/curator.ts starts it; kazoo_bench.py is
 * its Python twin). Arguments are key=value pairs; it prints one JSON line:
 * {"ops", "wall_ms", "cpu_us", "per_session", "events", "max_holders", "mntr_before", "mntr_after"},
 * events being [kind, ms, session] with kind 0 = an acquire returned, 1 = release() called
 * (System.nanoTime, CLOCK_MONOTONIC), max_holders the semaphore scenario's count of holders at
 * once, and the mntr pair the server's counters read just before and after the timed window (so
 * connecting and warming up are outside it).
 *
 * scenario=mutex: one session acquires and releases an InterProcessMutex `ops` times after
 * `warmup` untimed cycles. scenario=contend: `sessions` sessions, a thread each, loop on lock
 * `i % locks` (an InterProcessReadWriteLock with read_ratio) for duration_ms, after an untimed
 * second of the same to let the JIT compile the paths. scenario=semaphore: the same with an
 * InterProcessSemaphoreV2 of `leases` leases per lock path, and "max_holders" in the JSON: the
 * most sessions this program itself saw holding one semaphore at once (see HolderCount).
 * scenario=herd: a thousand waiters handed the lock down their queue (see herd()), with
 * "queued_watches" in the JSON: the server's watch count once they were all queued, and
 * "join_ms", the time the queue took to form. scenario=longqueue: the same, with the memory the
 * queued waiters add ("heap_bytes", "rss_bytes") and waits bounded by `bound_s`.
 */
public final class CuratorBench {
    private static final int SESSION_TIMEOUT_MS = 30_000;
    private static final long WARMUP_MS = 1_000;
    /** Far beyond any handoff here; a lock that is not had by then means the run is broken, and it ends. */
    private static final long ACQUIRE_TIMEOUT_S = 60;

    public static void main(String[] args) throws Exception {
        Map<String, String> spec = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            spec.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        String result = switch (spec.get("scenario")) {
            case "mutex" -> mutex(spec);
            case "contend", "semaphore" -> contend(spec);
            case "herd", "longqueue" -> herd(spec);
            default -> throw new IllegalArgumentException("unknown scenario " + spec.get("scenario"));
        };
        System.out.println(result);
    }

    private static CuratorFramework connect(String hosts) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(hosts)
                .sessionTimeoutMs(SESSION_TIMEOUT_MS)
                .retryPolicy(new RetryOneTime(100))
                .build();
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) throw new IllegalStateException("not connected to " + hosts);
        return client;
    }

    private static String mutex(Map<String, String> spec) throws Exception {
        int ops = Integer.parseInt(spec.get("ops"));
        int warmup = Integer.parseInt(spec.get("warmup"));
        try (CuratorFramework client = connect(spec.get("hosts"))) {
            InterProcessMutex lock = new InterProcessMutex(client, spec.get("root"));
            for (int i = 0; i < warmup; i++) cycle(lock);
            String before = mntr(spec);
            long cpu0 = cpuNanos();
            long t0 = System.nanoTime();
            for (int i = 0; i < ops; i++) cycle(lock);
            long wall = System.nanoTime() - t0;
            long cpu = cpuNanos() - cpu0;
            return json(ops, wall, cpu, null, null, Map.of(), before, mntr(spec));
        }
    }

    private static void cycle(InterProcessMutex lock) throws Exception {
        acquire(lock);
        lock.release();
    }

    private static void acquire(InterProcessMutex lock) throws Exception {
        acquire(lock, ACQUIRE_TIMEOUT_S);
    }

    private static void acquire(InterProcessMutex lock, long timeoutS) throws Exception {
        if (!lock.acquire(timeoutS, TimeUnit.SECONDS)) throw notAcquired(timeoutS);
    }

    private static IllegalStateException notAcquired() {
        return notAcquired(ACQUIRE_TIMEOUT_S);
    }

    private static IllegalStateException notAcquired(long timeoutS) {
        return new IllegalStateException("not acquired within " + timeoutS + " s");
    }

    /** What one session contends for: an acquire returns what gives it back. */
    @FunctionalInterface
    private interface Contended {
        Held acquire() throws Exception;
    }

    @FunctionalInterface
    private interface Held {
        void release() throws Exception;
    }

    /** Makes one session's Contended on `path`, as the scenario's spec says. */
    @FunctionalInterface
    private interface Contenders {
        Contended make(CuratorFramework client, String path);
    }

    private static Contenders contenders(Map<String, String> spec) {
        if (spec.get("scenario").equals("semaphore")) {
            int leases = Integer.parseInt(spec.get("leases"));
            return (client, path) -> {
                InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, leases);
                return () -> {
                    Lease lease = semaphore.acquire(ACQUIRE_TIMEOUT_S, TimeUnit.SECONDS);
                    if (lease == null) throw notAcquired();
                    return () -> semaphore.returnLease(lease);
                };
            };
        }
        if (!spec.containsKey("read_ratio")) {
            return (client, path) -> {
                InterProcessMutex mutex = new InterProcessMutex(client, path);
                return () -> {
                    acquire(mutex);
                    return mutex::release;
                };
            };
        }
        double readRatio = Double.parseDouble(spec.get("read_ratio"));
        return (client, path) -> {
            InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, path);
            return () -> {
                InterProcessMutex lock = ThreadLocalRandom.current().nextDouble() < readRatio ? rw.readLock() : rw.writeLock();
                acquire(lock);
                return lock::release;
            };
        };
    }

    /**
     * This program's own count of a semaphore's holders, independent of Curator: a session enters
     * after acquire returns and leaves before it returns the lease, holding hold_ms between so
     * that the leases fill and an over-full semaphore would show.
     */
    private static final class HolderCount {
        private final AtomicInteger now = new AtomicInteger();
        private final AtomicInteger most = new AtomicInteger();
        private final long holdMs;

        HolderCount(long holdMs) {
            this.holdMs = holdMs;
        }

        void hold() throws InterruptedException {
            most.accumulateAndGet(now.incrementAndGet(), Math::max);
            Thread.sleep(holdMs);
            now.decrementAndGet();
        }
    }

    private static String contend(Map<String, String> spec) throws Exception {
        int sessions = Integer.parseInt(spec.get("sessions"));
        int locks = Integer.parseInt(spec.get("locks"));
        long durationMs = Long.parseLong(spec.get("duration_ms"));
        Contenders contenders = contenders(spec);
        boolean counted = spec.get("scenario").equals("semaphore");
        List<CuratorFramework> clients = new ArrayList<>();
        try {
            for (int i = 0; i < sessions; i++) clients.add(connect(spec.get("hosts")));
            round(clients, spec.get("root") + "/warmup", locks, WARMUP_MS, contenders, null, new int[sessions], counted ? holderCounts(locks, spec) : null);
            List<double[]> events = new ArrayList<>();
            int[] counts = new int[sessions];
            HolderCount[] holders = counted ? holderCounts(locks, spec) : null;
            String before = mntr(spec);
            long cpu0 = cpuNanos();
            long t0 = System.nanoTime();
            round(clients, spec.get("root"), locks, durationMs, contenders, events, counts, holders);
            long wall = System.nanoTime() - t0;
            long cpu = cpuNanos() - cpu0;
            String after = mntr(spec);
            int total = 0;
            for (int c : counts) total += c;
            Map<String, Integer> most = holders == null ? Map.of() : Map.of("max_holders", Arrays.stream(holders).mapToInt(h -> h.most.get()).max().orElse(0));
            return json(total, wall, cpu, counts, events, most, before, after);
        } finally {
            for (CuratorFramework client : clients) client.close();
        }
    }

    /**
     * scenario=herd: `sessions` × `waiters_per_session` waiters (a thread and an InterProcessMutex
     * each) queue on one lock behind a holder; once all are queued and the server's watch count
     * has settled, the holder releases and each waiter releases as soon as it holds, so the lock
     * goes down the queue (bench/herd.ts is the zklock twin). An untimed drain of `sessions` × 2
     * waiters on another path goes first, on the same sessions, so the JIT has compiled the
     * paths. The mntr pair is read around the timed drain alone. scenario=longqueue is the same
     * with "heap_bytes" and "rss_bytes" in the JSON (see drain()) and every wait bounded by
     * `bound_s` instead of a minute.
     */
    private static String herd(Map<String, String> spec) throws Exception {
        int sessions = Integer.parseInt(spec.get("sessions"));
        int perSession = Integer.parseInt(spec.get("waiters_per_session"));
        boolean longQueue = spec.get("scenario").equals("longqueue");
        long boundS = longQueue ? Long.parseLong(spec.get("bound_s")) : ACQUIRE_TIMEOUT_S;
        List<CuratorFramework> clients = new ArrayList<>();
        try {
            for (int i = 0; i <= sessions; i++) clients.add(connect(spec.get("hosts")));
            drain(spec, clients, spec.get("root") + "-warmup", sessions * Math.min(2, perSession), boundS, false);
            return drain(spec, clients, spec.get("root"), sessions * perSession, boundS, longQueue);
        } finally {
            for (CuratorFramework client : clients) client.close();
        }
    }

    /**
     * One drain of `waiters` on `path`: the last client holds first, the others' threads queue
     * behind it. "join_ms" is from starting the first waiter's thread to the last watch the server
     * counted (see queueFormed()). With `memory`, the heap the queued waiters add: used heap after
     * System.gc() (their threads' stacks are outside it; "rss_bytes", the resident set from /proc,
     * has them), while they wait, minus the same before the first was started.
     */
    private static String drain(Map<String, String> spec, List<CuratorFramework> clients, String path, int waiters, long boundS, boolean memory) throws Exception {
        int sessions = clients.size() - 1;
        CuratorFramework holder = clients.get(sessions);
        InterProcessMutex first = new InterProcessMutex(holder, path);
        acquire(first, boundS);
        List<double[]> events = new ArrayList<>();
        // The holder's hold is the first in the log, so the handoff from its release counts too.
        events.add(new double[] {0, System.nanoTime() / 1e6, -1});
        List<Exception> failures = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        long heapBefore = memory ? usedHeapAfterGc() : 0;
        long rssBefore = memory ? residentBytes() : 0;
        long joinStart = System.nanoTime();
        for (int w = 0; w < waiters; w++) {
            int waiter = w;
            InterProcessMutex mutex = new InterProcessMutex(clients.get(w % sessions), path);
            threads.add(started(failures, () -> {
                acquire(mutex, boundS);
                double now = System.nanoTime() / 1e6;
                synchronized (events) {
                    events.add(new double[] {0, now, waiter});
                    events.add(new double[] {1, now, waiter});
                }
                mutex.release();
            }));
        }
        long[] formed = queueFormed(spec, holder, path, waiters, joinStart + TimeUnit.SECONDS.toNanos(boundS), failures);
        Map<String, Number> figures = new HashMap<>(Map.of("queued_watches", formed[0], "join_ms", (formed[1] - joinStart) / 1e6));
        if (memory) {
            figures.put("heap_bytes", usedHeapAfterGc() - heapBefore);
            figures.put("rss_bytes", residentBytes() - rssBefore);
        }
        String before = mntr(spec);
        long cpu0 = cpuNanos();
        long t0 = System.nanoTime();
        synchronized (events) {
            events.add(new double[] {1, t0 / 1e6, -1});
        }
        first.release();
        for (Thread thread : threads) thread.join();
        long wall = System.nanoTime() - t0;
        long cpu = cpuNanos() - cpu0;
        if (!failures.isEmpty()) throw failures.get(0);
        return json(waiters, wall, cpu, null, events, figures, before, mntr(spec));
    }

    /**
     * Each waiter sets its watch just after its node shows in the queue: polls the server's count
     * every 20 ms until it holds one per waiter and has not moved for 500 ms, and the lock's
     * children are the holder and every waiter (bench/herd.ts waits the same way), or throws at
     * `until` (System.nanoTime), or with the first of the waiters' `failures` (a queue that lost a
     * waiter never forms). Returns the count and when it was first seen: the last watch set, that
     * is the queue formed.
     */
    private static long[] queueFormed(Map<String, String> spec, CuratorFramework observer, String path, int waiters, long until, List<Exception> failures) throws Exception {
        Pattern total = Pattern.compile("Total watches:\\s*(\\d+)");
        long watches = -1;
        long settledAt = System.nanoTime();
        for (;;) {
            synchronized (failures) {
                if (!failures.isEmpty()) throw failures.get(0);
            }
            long now = System.nanoTime();
            Matcher found = total.matcher(fourLetterWord(spec, "wchs"));
            long count = found.find() ? Long.parseLong(found.group(1)) : 0;
            if (count != watches) {
                watches = count;
                settledAt = now;
            }
            if (watches >= waiters && now - settledAt >= TimeUnit.MILLISECONDS.toNanos(500) && observer.getChildren().forPath(path).size() >= waiters + 1) {
                return new long[] {watches, settledAt};
            }
            if (now > until) throw new IllegalStateException("the queue on " + path + " did not form: " + waiters + " waiters, the server's watch count " + watches + ", not settled at " + waiters + " or more in time");
            Thread.sleep(20);
        }
    }

    /** Used heap after full collections (twice, as bench/heap.ts collects: the first one's finalizers can free more). */
    private static long usedHeapAfterGc() {
        System.gc();
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** The process's resident set (VmRSS in /proc/self/status), bytes. */
    private static long residentBytes() throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }

    private static HolderCount[] holderCounts(int locks, Map<String, String> spec) {
        HolderCount[] holders = new HolderCount[locks];
        for (int i = 0; i < locks; i++) holders[i] = new HolderCount(Long.parseLong(spec.get("hold_ms")));
        return holders;
    }

    /** Every session loops acquire → release on its lock until the time is up; events and holders may be null. */
    private static void round(
            List<CuratorFramework> clients, String root, int locks, long durationMs, Contenders contenders, List<double[]> events, int[] counts, HolderCount[] holders)
            throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        List<Exception> failures = new ArrayList<>();
        long[] deadline = new long[1];
        for (int i = 0; i < clients.size(); i++) {
            int session = i;
            String path = root + "/lock-" + (i % locks);
            Contended contended = contenders.make(clients.get(i), path);
            HolderCount holder = holders == null ? null : holders[i % locks];
            threads.add(started(failures, () -> {
                start.await();
                while (System.nanoTime() < deadline[0]) {
                    Held held = contended.acquire();
                    double acquired = System.nanoTime() / 1e6;
                    counts[session]++;
                    if (holder != null) holder.hold();
                    double releasing = System.nanoTime() / 1e6;
                    if (events != null) {
                        synchronized (events) {
                            events.add(new double[] {0, acquired, session});
                            events.add(new double[] {1, releasing, session});
                        }
                    }
                    held.release();
                }
            }));
        }
        deadline[0] = System.nanoTime() + durationMs * 1_000_000L;
        start.countDown();
        for (Thread thread : threads) thread.join();
        if (!failures.isEmpty()) throw failures.get(0);
    }

    @FunctionalInterface
    private interface Body {
        void run() throws Exception;
    }

    /** A started thread running `body`; its exception lands in `failures`, for the caller to throw once all are joined. */
    private static Thread started(List<Exception> failures, Body body) {
        Thread thread = new Thread(() -> {
            try {
                body.run();
            } catch (Exception e) {
                synchronized (failures) {
                    failures.add(e);
                }
            }
        });
        thread.start();
        return thread;
    }

    /** The server's counters (its `mntr` answer; hosts is one host:port), for curator.ts to count the timed window's requests and watch events. */
    /**
     * With ZKLOCK_BENCH_SERVER_PID set (bench/run.ts sets it), the server JVM's CPU ticks
     * (utime + stime from /proc) are appended as one more mntr line, read at the same moment.
     */
    private static String mntr(Map<String, String> spec) throws Exception {
        String answer = fourLetterWord(spec, "mntr");
        String pid = System.getenv("ZKLOCK_BENCH_SERVER_PID");
        if (pid == null) return answer;
        String stat = Files.readString(Path.of("/proc", pid, "stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return answer + "zklock_server_cpu_ticks\t" + (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) + "\n";
    }

    private static String fourLetterWord(Map<String, String> spec, String word) throws Exception {
        String hosts = spec.get("hosts");
        int colon = hosts.lastIndexOf(':');
        return FourLetterWordMain.send4LetterWord(hosts.substring(0, colon), Integer.parseInt(hosts.substring(colon + 1)), word);
    }

    /** CPU of the whole JVM (its I/O and GC threads too, as kazoo's count includes its I/O thread). */
    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** `counts`: the scenario's own figures (max_holders, queued_watches, join_ms, heap_bytes…), added as they are. */
    private static String json(int ops, long wallNanos, long cpuNanos, int[] perSession, List<double[]> events, Map<String, ? extends Number> counts, String mntrBefore, String mntrAfter) {
        StringBuilder out = new StringBuilder();
        out.append("{\"ops\":").append(ops).append(",\"wall_ms\":").append(wallNanos / 1e6).append(",\"cpu_us\":").append(cpuNanos / 1e3);
        if (perSession != null) {
            out.append(",\"per_session\":[");
            for (int i = 0; i < perSession.length; i++) out.append(i == 0 ? "" : ",").append(perSession[i]);
            out.append(']');
        }
        if (events != null) {
            out.append(",\"events\":[");
            for (int i = 0; i < events.size(); i++) {
                double[] e = events.get(i);
                out.append(i == 0 ? "" : ",").append('[').append((int) e[0]).append(',').append(e[1]).append(',').append((int) e[2]).append(']');
            }
            out.append(']');
        }
        counts.forEach((key, value) -> out.append(",\"").append(key).append("\":").append(value));
        out.append(",\"mntr_before\":").append(jsonString(mntrBefore)).append(",\"mntr_after\":").append(jsonString(mntrAfter));
        return out.append('}').toString();
    }

    /** mntr answers are ASCII lines of name, tab, value. */
    private static String jsonString(String text) {
        return '"' + text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n").replace("\t", "\\t") + '"';
    }
}
