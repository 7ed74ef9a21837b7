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
