"""What the watcher benchmarks read off a running watcher: its HTTP endpoints and its memory."""
import os
import socket
import urllib.request


def endpoint():
    """A free loopback port for the watcher's endpoints, their base URL, and the log file
    ($WATCH_LOG, else nowhere)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return port, f"http://127.0.0.1:{port}", open(os.environ.get("WATCH_LOG", "/dev/null"), "w")


def get(base, path):
    """GET base+path: (status, body), (0, "") when it does not answer."""
    try:
        with urllib.request.urlopen(base + path, timeout=5) as r:
            return r.status, r.read().decode()
    except Exception:
        return 0, ""


def memory(pid):
    """Resident and peak resident memory of a process, in MiB."""
    status = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status"))
    return int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


def sample(text, series):
    """The value of one series in a Prometheus text page (0 when absent)."""
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def settle(proc, base, started, limit):
    """Waits (at most `limit` s) until the watcher `proc` is ready, lets it run 10 s more, then
    reads its metrics and memory and stops it: (ready seconds, still serving, metrics text, RSS
    MiB, peak RSS MiB). Prints an error object and exits when it never becomes ready."""
    import json
    import sys
    import time

    deadline = time.monotonic() + limit
    while get(base, "/readyz")[0] != 200:
        if proc.poll() is not None or time.monotonic() > deadline:
            print(json.dumps({"error": "the watcher was not ready", "exit": proc.poll()}))
            sys.exit(1)
        time.sleep(0.05)
    ready = time.monotonic() - started
    time.sleep(10)
    alive = proc.poll() is None and get(base, "/readyz")[0] == 200
    metrics = get(base, "/metrics")[1]
    rss, peak = memory(proc.pid)
    proc.terminate()
    proc.wait(timeout=30)
    return ready, alive, metrics, rss, peak
