"""A chaos contender on kazoo 2.8 (Debian's python3-kazoo, run with /usr/bin/python3).

It contends beside zklock's workers (which use `layout: 'kazoo'` on these paths) and reports to
the same fenced resource; chaos/worker.ts is the zklock twin and chaos/peers/peer-process.ts
starts this one. One session; loops until told to stop: acquire a lock picked by a seeded
random.Random, begin an operation on the resource, hold, end it, release.

Argument: a JSON config {name, connect, seed, resourceUrl, sessionTimeout}. Control on stdin:
`stop` finishes the current hold and the loop, then prints {"type":"idle"}; `close` closes the
client and prints {"type":"stats",...}, then the process exits 0. Stdin EOF means the parent
died: the process ends at once, whatever it was doing. stderr is a free-form log.
"""
import json
import logging
import os
import random
import sys
import threading
import time
import urllib.request

from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout

# LOCKS in chaos/history.ts: kazoo's layout.
MUTEX = "/chaos/kazoo-mutex"
READ_WRITE = "/chaos/kazoo-rw"
KINDS = ["mutex", "mutex", "read", "read", "write"]

ACQUIRE_TIMEOUT_S = 10
CONNECT_TIMEOUT_S = 15
RESOURCE_TIMEOUT_S = 5
CLOSE_TIMEOUT_S = 5
# After stdin EOF: how long the main thread may take to wind down before the process exits anyway.
EOF_GRACE_S = 10

log = logging.getLogger("kazoo-worker")


class Control:
    """The stdin lines: `stop`, `close`, and EOF (the parent died)."""

    def __init__(self):
        self.stopping = threading.Event()
        self.closing = threading.Event()
        self.parent_gone = threading.Event()
        self.locks = []

    def watch(self):
        thread = threading.Thread(target=self._read, name="stdin", daemon=True)
        thread.start()

    def _read(self):
        for line in sys.stdin:
            if line.strip() == "stop":
                self.stopping.set()
            elif line.strip() == "close":
                self.stopping.set()
                self.closing.set()
                return
        self.parent_gone.set()
        self.stopping.set()
        self.closing.set()
        # A pending acquire returns at once (kazoo's own way out of a blocked acquire).
        for lock in self.locks:
            lock.cancel()
        timer = threading.Timer(EOF_GRACE_S, self._halt)
        timer.daemon = True
        timer.start()

    @staticmethod
    def _halt():
        log.error("main thread still running %s s after stdin closed: exiting", EOF_GRACE_S)
        os._exit(0)


def emit(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"), headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=RESOURCE_TIMEOUT_S) as response:
        return json.loads(response.read().decode("utf-8"))


class Worker:
    def __init__(self, config, client, control):
        self.config = config
        self.client = client
        self.control = control
        self.worker = config["name"] + ".1"
        self.rng = random.Random(config["seed"])
        self.stats = {"name": config["name"], "acquisitions": 0, "acquireErrors": {}}

    def loop(self):
        locks = {
            "mutex": self.client.Lock(MUTEX, self.worker),
            "read": self.client.ReadLock(READ_WRITE, self.worker),
            "write": self.client.WriteLock(READ_WRITE, self.worker),
        }
        self.control.locks = list(locks.values())
        n = 0
        while not self.control.stopping.is_set():
            kind = self.rng.choice(KINDS)
            lock = locks[kind]
            try:
                # False only when the retry deadline (the timeout) ran out before the lock was even tried.
                error = None if lock.acquire(timeout=ACQUIRE_TIMEOUT_S) else "LOCK_TIMEOUT"
            except LockTimeout:
                error = "LOCK_TIMEOUT"
            except Exception as e:
                error = type(e).__name__
            if self.control.parent_gone.is_set():
                break
            if error is not None:
                self.count_error(error)
                time.sleep(0.1 + self.rng.random() * 0.2)
                continue
            acquired_at = time.monotonic() * 1000
            session = self.session()
            stat = self.node_stat(lock.path + "/" + lock.node)
            if stat is None:
                # The node went with the session before we could read its token: nothing is held.
                self.count_error("NONODE")
            else:
                self.stats["acquisitions"] += 1
                n += 1
                held = {"lock": lock.path, "token": str(stat.czxid), "fenced": kind != "read"}
                self.operate(f"{self.worker}#{n}", kind, held, session, acquired_at, self.rng.randint(20, 150))
            try:
                lock.release()
            except Exception as e:
                # The command retry's deadline bounds this; the leak check finds a node left behind.
                log.warning("releasing %s: %r", lock.path, e)
            time.sleep(self.rng.random() * 0.05)

    def node_stat(self, path):
        try:
            return self.client.exists(path)
        except Exception as e:
            log.warning("reading %s: %r", path, e)
            return None

    def session(self):
        # Hex like BigInt.toString(16) on our side, so the same session reads the same in every language.
        client_id = self.client.client_id
        return format(client_id[0], "x") if client_id else "unknown"

    def operate(self, op_id, kind, held, session, acquired_at, hold_ms):
        begin = {
            "id": op_id,
            "worker": self.worker,
            "process": self.config["name"],
            "kind": kind,
            "locks": [held],
            "language": "kazoo",
            "session": session,
            "acquiredAt": acquired_at,
            "holdMs": hold_ms,
        }
        try:
            if post(self.config["resourceUrl"] + "/begin", begin).get("accepted"):
                self.control.parent_gone.wait(hold_ms / 1000)
        except Exception as e:
            log.warning("begin %s: %r", op_id, e)
        try:
            post(self.config["resourceUrl"] + "/end", {"id": op_id})
        except Exception as e:
            log.warning("end %s: %r", op_id, e)

    def count_error(self, code):
        errors = self.stats["acquireErrors"]
        errors[code] = errors.get(code, 0) + 1


def close_bounded(client):
    """Stops the client in a thread of its own: the close request waits for a server that may be gone."""

    def close():
        client.stop()
        client.close()

    closer = threading.Thread(target=close, name="close", daemon=True)
    closer.start()
    closer.join(CLOSE_TIMEOUT_S)


def main():
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="[%(asctime)s kazoo] %(name)s %(levelname)s %(message)s")
    config = json.loads(sys.argv[1])
    control = Control()
    control.watch()
    client = KazooClient(
        hosts=config["connect"],
        timeout=config["sessionTimeout"] / 1000,
        # Reconnect for as long as it takes; give up on a command (a release) after a bounded while.
        connection_retry={"max_tries": -1, "max_delay": 1},
        command_retry={"max_tries": 5, "max_delay": 1, "deadline": 15},
    )
    client.start(timeout=CONNECT_TIMEOUT_S)
    worker = Worker(config, client, control)
    try:
        worker.loop()
        if not control.parent_gone.is_set():
            emit({"type": "idle"})
        control.closing.wait()
    finally:
        close_bounded(client)
    emit({"type": "stats", "stats": worker.stats})


if __name__ == "__main__":
    main()
