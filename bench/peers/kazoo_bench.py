"""kazoo side of zklock's benchmark. Driven by bench/peers/kazoo.ts: one scenario per process.

Usage: /usr/bin/python3 kazoo_bench.py '<json spec>'   (the spec's keys are read below)
Prints one JSON object on stdout. Times are milliseconds from time.perf_counter(); cpu_s is
time.process_time(), which covers every thread of this process (kazoo's I/O thread included).
"""

import gc
import json
import os
import random
import re
import socket
import sys
import threading
import time

from kazoo.client import KazooClient
from kazoo.retry import ForceRetryError
from kazoo.recipe.lock import Lock, ReadLock, WriteLock
from kazoo.version import __version__ as KAZOO_VERSION

SESSION_TIMEOUT_S = 30.0
SMALL = b"x" * 16


# Far beyond any handoff here (as CuratorBench.java's).
ACQUIRE_TIMEOUT_S = 60


def connect(hosts):
    zk = KazooClient(hosts=hosts, timeout=SESSION_TIMEOUT_S)
    zk.start(timeout=30)
    return zk


def now_ms():
    return time.perf_counter() * 1000.0


def four_letter_word(hosts, word):
    """A four-letter word's whole answer (hosts is one host:port). Not KazooClient.command(),
    which reads one recv() of 8 KiB and cuts the answer short."""
    host, port = hosts.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(word)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return b"".join(chunks).decode("ascii", "replace")
            chunks.append(chunk)


def mntr(hosts):
    """The server's counters, read around a timed window: kazoo.ts turns the two answers into the
    requests and watch events of that window alone. With ZKLOCK_BENCH_SERVER_PID set (bench/run.ts
    sets it), the server JVM's CPU ticks (utime + stime from /proc) are appended as one more line."""
    answer = four_letter_word(hosts, b"mntr")
    pid = os.environ.get("ZKLOCK_BENCH_SERVER_PID")
    if pid is None:
        return answer
    with open("/proc/%s/stat" % pid) as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return answer + "zklock_server_cpu_ticks\t%d\n" % (int(fields[11]) + int(fields[12]))


def timed(ops, body):
    """Runs body() and reports wall and process CPU time, like measure() on the Node side."""
    cpu0, t0 = time.process_time(), time.perf_counter()
    body()
    return {"ops": ops, "wall_ms": (time.perf_counter() - t0) * 1000.0, "cpu_us": (time.process_time() - cpu0) * 1e6}


# ---- client rows: one session, sequential or with `depth` requests in flight ----


def client_row(zk, spec):
    root, op, ops, depth = spec["root"], spec["op"], spec["ops"], spec["depth"]
    zk.ensure_path(root)
    data_path = root + "/data"
    if not zk.exists(data_path):
        zk.create(data_path, SMALL)

    def one_sync(i):
        if op == "getData":
            zk.get(data_path)
        elif op == "setData":
            zk.set(data_path, SMALL)
        else:  # a create+delete pair; ephemeral-sequential for the lock ceiling row
            if op == "ephemeralPair":
                path = zk.create(root + "/n", SMALL, ephemeral=True, sequence=True)
            else:
                path = zk.create("%s/c%d" % (root, i), SMALL)
            zk.delete(path)

    def one_async(i, done):
        if op == "getData":
            zk.get_async(data_path).rawlink(done)
        elif op == "setData":
            zk.set_async(data_path, SMALL).rawlink(done)
        else:
            # Chained in the completion callback, so the pair holds its slot until the delete's reply.
            path = "%s/c%d" % (root, i)
            zk.create_async(path, SMALL).rawlink(lambda _r: zk.delete_async(path).rawlink(done))

    def sequential(n):
        for i in range(n):
            one_sync(i)

    def pipelined(n):
        # A sliding window like inFlight() on the Node side: a slot frees when its reply arrives.
        slots = threading.Semaphore(depth)
        finished = threading.Semaphore(0)

        def done(_result):
            slots.release()
            finished.release()

        for i in range(n):
            slots.acquire()
            one_async(i, done)
        for _ in range(n):
            finished.acquire()

    run = sequential if depth <= 1 else pipelined
    run(spec["warmup"])
    return timed(ops, lambda: run(ops))


# ---- lock rows ----


def _get_predecessor_ahead_only(self, node):
    """kazoo before 2.9 lets a reader count writers queued *after* it as predecessors, so a reader
    and a later writer can wait for each other forever (python-zk/kazoo#649, fixed upstream by
    #650). Debian ships 2.8.0, where the read/write row deadlocks within a second; this is
    upstream's fix: only contenders with a lower sequence number than ours count."""
    children = self.client.get_children(self.path)
    if node not in children:
        raise ForceRetryError()  # our node went with an expired session, as in the original
    own = int(node[-10:])
    ahead = []
    for child in children:
        match = self._contenders_re.search(child)
        if match is not None and int(match.group(1)) < own:
            ahead.append((int(match.group(1)), child))
    return max(ahead)[1] if ahead else None


def patch_read_write_deadlock():
    """Applies the fix above on kazoo < 2.9; returns a note for the report, or None."""
    major, minor = (int(part) for part in KAZOO_VERSION.split(".")[:2])
    if (major, minor) >= (2, 9):
        return None
    Lock._get_predecessor = _get_predecessor_ahead_only
    return "kazoo %s: Lock._get_predecessor patched with upstream's fix for #649 (r/w deadlock)" % KAZOO_VERSION


def uncontended(zk, spec):
    lock = Lock(zk, spec["root"] + "/lock")

    def cycles(n):
        for _ in range(n):
            lock.acquire()
            lock.release()

    cycles(spec["warmup"])
    before = mntr(spec["hosts"])
    result = timed(spec["ops"], lambda: cycles(spec["ops"]))
    return dict(result, mntr_before=before, mntr_after=mntr(spec["hosts"]))


class HolderCount:
    """This script's own count of a semaphore's holders, independent of kazoo: a session enters
    after acquire() returns and leaves before it calls release(), holding hold_ms between so that
    the leases fill and an over-full semaphore would show."""

    def __init__(self, ms):
        self.ms = ms
        self.guard = threading.Lock()
        self.now = 0
        self.most = 0

    def hold(self):
        with self.guard:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.ms / 1000.0)
        with self.guard:
            self.now -= 1


def picker(zk, path, spec):
    """What a session acquires next: its Lock, a side of its read/write lock, or its Semaphore."""
    if spec["scenario"] == "semaphore":
        return (lambda semaphore: lambda: semaphore)(zk.Semaphore(path, max_leases=spec["leases"]))
    read_ratio = spec.get("read_ratio")
    if read_ratio is None:
        return (lambda lock: lambda: lock)(Lock(zk, path))
    read, write = ReadLock(zk, path), WriteLock(zk, path)
    return lambda: read if random.random() < read_ratio else write


def contend(hosts, spec):
    """`sessions` clients in threads loop acquire → release for `duration_ms` on `locks` lock paths
    (session i uses lock i % locks); with read_ratio, each acquisition is a read with that chance;
    scenario "semaphore" loops on semaphores of `leases` leases and counts their holders."""
    sessions, locks = spec["sessions"], spec["locks"]
    patched = patch_read_write_deadlock() if spec.get("read_ratio") is not None else None
    holders = [HolderCount(spec["hold_ms"]) for _ in range(locks)] if spec["scenario"] == "semaphore" else None
    clients = [connect(hosts) for _ in range(sessions)]
    events = []  # [kind, t_ms, session]: kind 0 = acquire resolved, 1 = release called
    counts = [0] * sessions
    barrier = threading.Barrier(sessions + 1)
    deadline = [0.0]

    failures = []

    def worker(i):
        pick = picker(clients[i], "%s/lock-%d" % (spec["root"], i % locks), spec)
        holder = holders[i % locks] if holders else None
        try:
            barrier.wait()
            while time.perf_counter() < deadline[0]:
                lock = pick()
                # Bounded as Curator's side is: a lock not had by then means the run is broken.
                if not lock.acquire(timeout=ACQUIRE_TIMEOUT_S):
                    raise RuntimeError("not acquired within %d s" % ACQUIRE_TIMEOUT_S)
                events.append([0, now_ms(), i])
                counts[i] += 1
                if holder:
                    holder.hold()
                events.append([1, now_ms(), i])
                lock.release()
        except Exception as error:  # reported by the main thread; the others stop at the barrier or the deadline
            failures.append(error)
            barrier.abort()

    # Read before any thread starts: a failure here must not leave threads waiting at the barrier.
    before = mntr(hosts)
    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(sessions)]
    for t in threads:
        t.start()
    deadline[0] = time.perf_counter() + spec["duration_ms"] / 1000.0
    cpu0, t0 = time.process_time(), time.perf_counter()
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        pass
    for t in threads:
        t.join()
    if failures:
        raise failures[0]
    result = {
        "ops": sum(counts),
        "wall_ms": (time.perf_counter() - t0) * 1000.0,
        "cpu_us": (time.process_time() - cpu0) * 1e6,
        "per_session": counts,
        "events": events,
        "note": patched,
        "mntr_before": before,
        "mntr_after": mntr(hosts),
    }
    if holders:
        result["max_holders"] = max(h.most for h in holders)
    for zk in clients:
        zk.stop()
        zk.close()
    return result


def herd(hosts, spec):
    """`sessions` x `waiters_per_session` waiters (a thread and a Lock each) queue on one lock
    behind a holder; once all are queued and the server's watch count has settled, the holder
    releases and each waiter releases as soon as it holds, so the lock goes down the queue
    (bench/herd.ts is the zklock twin). An untimed drain of `sessions` x 2 waiters on another path
    goes first, on the same sessions, as the other sides do. The mntr pair is read around the
    timed drain alone. Scenario "longqueue" is the same with "rss_bytes" (and "heap_bytes", the
    same figure: see drain()) in the JSON and every wait bounded by `bound_s` instead of a minute."""
    sessions = spec["sessions"]
    long_queue = spec["scenario"] == "longqueue"
    bound_s = spec["bound_s"] if long_queue else ACQUIRE_TIMEOUT_S
    clients = [connect(hosts) for _ in range(sessions + 1)]
    try:
        drain(hosts, clients, spec["root"] + "-warmup", sessions * min(2, spec["waiters_per_session"]), bound_s, False)
        return drain(hosts, clients, spec["root"], sessions * spec["waiters_per_session"], bound_s, long_queue)
    finally:
        for zk in clients:
            zk.stop()
            zk.close()


def resident_bytes():
    """The process's resident set (VmRSS in /proc/self/status), after a full collection."""
    gc.collect()
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def drain(hosts, clients, path, waiters, bound_s, memory):
    """One drain of `waiters` on `path`: the last client holds first, the others' threads queue
    behind it. "join_ms" is from starting the first waiter's thread to the last watch the server
    counted (see queue_formed()). With `memory`, the resident set the queued waiters add, after
    gc.collect(), while they wait, minus the same before the first was started: Python has no
    cheap used-heap figure (tracemalloc would slow every allocation of the join), so it stands for
    the heap too, and holds the waiters' thread stacks and what the allocator keeps."""
    sessions = len(clients) - 1
    holder = clients[sessions]
    first = Lock(holder, path)
    if not first.acquire(timeout=bound_s):
        raise RuntimeError("the holder did not get %s" % path)
    # The holder's hold is the first in the log, so the handoff from its release counts too.
    events = [[0, now_ms(), -1]]
    failures = []

    def waiter(w):
        try:
            lock = Lock(clients[w % sessions], path)
            if not lock.acquire(timeout=bound_s):
                raise RuntimeError("not acquired within %d s" % bound_s)
            now = now_ms()
            events.append([0, now, w])
            events.append([1, now, w])
            lock.release()
        except Exception as error:  # reported by the main thread once all are done
            failures.append(error)

    rss_before = resident_bytes() if memory else 0
    join_start = time.perf_counter()
    threads = [threading.Thread(target=waiter, args=(w,), daemon=True) for w in range(waiters)]
    for t in threads:
        t.start()
    watching, settled_at = queue_formed(hosts, holder, path, waiters, join_start + bound_s, failures)
    figures = {"queued_watches": watching, "join_ms": (settled_at - join_start) * 1000.0}
    if memory:
        figures["rss_bytes"] = figures["heap_bytes"] = resident_bytes() - rss_before
    before = mntr(hosts)
    cpu0, t0 = time.process_time(), time.perf_counter()
    events.append([1, now_ms(), -1])
    first.release()
    for t in threads:
        t.join()
    wall_ms, cpu_us = (time.perf_counter() - t0) * 1000.0, (time.process_time() - cpu0) * 1e6
    if failures:
        raise failures[0]
    return dict(figures, ops=waiters, wall_ms=wall_ms, cpu_us=cpu_us, events=events, mntr_before=before, mntr_after=mntr(hosts))


def queue_formed(hosts, observer, path, waiters, until, failures):
    """Each waiter sets its watch just after its node shows in the queue: polls the server's count
    every 20 ms until it holds one per waiter and has not moved for 500 ms, and the lock's children
    are the holder and every waiter (bench/herd.ts waits the same way), or raises at `until`
    (time.perf_counter), or with the first of the waiters' `failures` (a queue that lost a waiter
    never forms). Returns the count and when it was first seen: the last watch set, that is the
    queue formed."""
    watches, settled_at = -1, time.perf_counter()
    while True:
        if failures:
            raise failures[0]
        now = time.perf_counter()
        match = re.search(r"Total watches:\s*(\d+)", four_letter_word(hosts, b"wchs"))
        count = int(match.group(1)) if match else 0
        if count != watches:
            watches, settled_at = count, now
        if watches >= waiters and now - settled_at >= 0.5 and len(observer.get_children(path)) >= waiters + 1:
            return watches, settled_at
        if now > until:
            raise RuntimeError("the queue on %s did not form: %d waiters, the server's watch count %d, not settled at %d or more in time" % (path, waiters, watches, waiters))
        time.sleep(0.02)


def main():
    spec = json.loads(sys.argv[1])
    scenario = spec["scenario"]
    if scenario in ("contend", "semaphore"):
        result = contend(spec["hosts"], spec)
    elif scenario in ("herd", "longqueue"):
        result = herd(spec["hosts"], spec)
    else:
        zk = connect(spec["hosts"])
        try:
            result = uncontended(zk, spec) if scenario == "mutex" else client_row(zk, spec)
        finally:
            zk.stop()
            zk.close()
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
