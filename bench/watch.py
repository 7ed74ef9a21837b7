"""The watcher's benchmark on a fleet (called by scripts/bench.sh): time to ready, API requests,
CPU and memory while nothing changes, and edit-to-metric latency over edits of distinct releases.

    python3 bench/watch.py BINARY KUBECTL PREFIX RELEASES NAMESPACES IDLE_SECONDS EDITS

Prints one JSON object.
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
    p99 = latencies[min(len(latencies) - 1, int(round(0.99 * len(latencies))) - 1)]
    print(json.dumps({
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
