"""What the watcher benchmarks read off a running watcher: its HTTP endpoints and its memory."""
import urllib.request


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
