"""The watcher's benchmark on a fleet (called by scripts/bench.sh): time to ready, API requests,
CPU and memory while nothing changes, and edit-to-metric latency over edits of distinct releases.

    python3 bench/watch.py BINARY KUBECTL PREFIX RELEASES NAMESPACES IDLE_SECONDS EDITS [STORM_SECONDS]

With STORM_SECONDS, then a storm: 20 edits a second (each of another release, sent straight to the
API server with the kubeconfig's client certificate, as kubectl would) for that long, each timed
from its answer to the watcher's metric; the watcher's RSS after it. Prints one JSON object.
"""
import json
import os
import statistics
import subprocess
import sys
import time

import probe

binary, kubectl, prefix = sys.argv[1:4]
releases, namespaces, idle, edits = (int(a) for a in sys.argv[4:8])
storm_seconds = int(sys.argv[8]) if len(sys.argv) > 8 else 0

port, base, log = probe.endpoint()
started = time.monotonic()
proc = subprocess.Popen(
    [binary, "watch", "-A", "-l", f"fleet={prefix}", "--metrics-address", f"127.0.0.1:{port}",
     "--log-format", "json", "--resync", "10m"],
    stdout=subprocess.DEVNULL, stderr=log)


def get(path):
    return probe.get(base, path)


def metrics():
    out = {}
    for line in get("/metrics")[1].splitlines():
        if line and not line.startswith("#"):
            series, _, value = line.rpartition(" ")
            out[series] = float(value)
    return out


def cpu_seconds():
    fields = open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory():
    return probe.memory(proc.pid)


def requests(m):
    return {k.split('"')[1]: v for k, v in m.items() if k.startswith("helm_drift_api_requests_total{")}


def percentile(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, max(0, int(round(q * len(sorted_values))) - 1))]


def api_client():
    """An HTTPS connection factory and the headers for the kubeconfig's current context."""
    import http.client
    import ssl
    import yaml_free
    config = yaml_free.kubeconfig(os.environ["KUBECONFIG"])
    context = ssl.create_default_context(cafile=config["ca"])
    context.load_cert_chain(config["cert"], config["key"])
    host = config["server"].removeprefix("https://")
    return lambda: http.client.HTTPSConnection(host, context=context, timeout=10)


def storm(first, seconds, per_second=20):
    """Edits of distinct releases at `per_second` for `seconds`; each timed to its metric."""
    import threading
    connect = api_client()
    pending, seen, lock, done = {}, [], threading.Lock(), threading.Event()

    def poll():
        while not done.is_set() or pending:
            m = metrics()
            now = time.monotonic()
            with lock:
                for series, edited in list(pending.items()):
                    if m.get(series) == 1.0:
                        seen.append(now - edited)
                        del pending[series]
                    elif now - edited > 30:
                        del pending[series]
            time.sleep(0.02)

    poller = threading.Thread(target=poll)
    poller.start()
    conn, sent, start = connect(), 0, time.monotonic()
    body = json.dumps({"data": {"greeting": "storm-edit"}})
    while sent < seconds * per_second:
        due = start + sent / per_second
        if due > time.monotonic():
            time.sleep(due - time.monotonic())
        r = first + sent
        ns, release = f"{prefix}-ns{r % namespaces}", f"{prefix}-r{r}"
        conn.request("PATCH", f"/api/v1/namespaces/{ns}/configmaps/{release}-o0", body,
                     {"Content-Type": "application/merge-patch+json", "User-Agent": "kubectl/storm"})
        answer = conn.getresponse()
        answer.read()
        if answer.status != 200:
            raise SystemExit(f"storm edit of {release}: HTTP {answer.status}")
        with lock:
            pending[f'helm_drift_release_drifted{{namespace="{ns}",release="{release}"}}'] = time.monotonic()
        sent += 1
    elapsed = time.monotonic() - start
    done.set()
    poller.join()
    seen.sort()
    return {
        "storm_edits": sent,
        "storm_edits_per_second": round(sent / elapsed, 1),
        "storm_seen": len(seen),
        "storm_median_s": round(statistics.median(seen), 3) if seen else None,
        "storm_p99_s": round(percentile(seen, 0.99), 3) if seen else None,
        "storm_max_s": round(seen[-1], 3) if seen else None,
    }


try:
    deadline = started + 300
    while get("/readyz")[0] != 200:
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit("the watcher did not get ready")
        time.sleep(0.02)
    ready = time.monotonic() - started
    m = metrics()
    at_ready = requests(m)
    checked = sum(1 for k in m if k.startswith("helm_drift_release_drifted{"))

    time.sleep(2)  # let the first-list touches settle
    before, cpu0, t0 = requests(metrics()), cpu_seconds(), time.monotonic()
    time.sleep(idle)
    after, cpu1, t1 = requests(metrics()), cpu_seconds(), time.monotonic()
    minutes = (t1 - t0) / 60
    idle_requests = {v: round((after.get(v, 0) - before.get(v, 0)) / minutes, 1) for v in after if v != "watch"}
    rss, hwm = memory()

    latencies = []
    for r in range(edits):
        ns, release = f"{prefix}-ns{r % namespaces}", f"{prefix}-r{r}"
        series = f'helm_drift_release_drifted{{namespace="{ns}",release="{release}"}}'
        subprocess.run([kubectl, "-n", ns, "patch", "configmap", f"{release}-o0", "--type", "merge",
                        "-p", '{"data":{"greeting":"bench-edit"}}'], check=True, capture_output=True)
        edited = time.monotonic()
        while metrics().get(series) != 1.0:
            if time.monotonic() - edited > 30:
                raise SystemExit(f"no drift seen for {release}")
            time.sleep(0.02)
        latencies.append(time.monotonic() - edited)
    latencies.sort()
    p99 = percentile(latencies, 0.99)
    result = {}
    if storm_seconds:
        result = storm(edits, storm_seconds)
        result["storm_rss_mib"], result["storm_peak_rss_mib"] = (round(v, 1) for v in memory())
    print(json.dumps(result | {
        "releases": checked,
        "ready_s": round(ready, 3),
        "requests_to_ready": at_ready,
        "idle_seconds": idle,
        "idle_requests_per_minute_besides_watches": idle_requests,
        "idle_cpu_percent_of_a_core": round(100 * (cpu1 - cpu0) / (t1 - t0), 2),
        "rss_mib": round(rss, 1),
        "peak_rss_mib": round(hwm, 1),
        "edits": len(latencies),
        "edit_to_metric_median_s": round(statistics.median(latencies), 3),
        "edit_to_metric_p99_s": round(p99, 3),
        "edit_to_metric_max_s": round(latencies[-1], 3),
    }))
finally:
    proc.terminate()
    proc.wait(timeout=30)
