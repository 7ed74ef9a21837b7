"""The watcher's audit benchmark (called by scripts/bench.sh with BENCH_ONLY=audit): a watcher of
a fleet of releases serves the audit webhook of the local control plane (started --audited), while
a sender posts a steady stream of audit batches about objects nobody watches (RATE writes a
second, in batches of 100, as an API server's webhook backend would, over TLS with its token). A
person (alice, impersonated by the admin) edits a different release's ConfigMap every 2 s; each edit
is timed from kubectl's answer to the watcher's /drifts.json naming alice. Memory is the watcher's
RSS before the stream, its peak, and after.

    python3 bench/audit.py BINARY KUBECTL SINK_ENV PREFIX RELEASES NAMESPACES RATE SECONDS

Prints one JSON object.
"""
import http.client
import json
import os
import ssl
import statistics
import subprocess
import sys
import threading
import time

import probe

binary, kubectl, sink_env, prefix = sys.argv[1:5]
releases, namespaces, rate, seconds = (int(a) for a in sys.argv[5:9])
sink = dict(line.strip().split("=", 1) for line in open(sink_env) if "=" in line)
state = os.path.dirname(sink_env)
tokens = os.path.join(state, "bench-audit-tokens")
open(tokens, "w").write(sink["AUDIT_TOKEN"] + "\n")

port, base, log = probe.endpoint()
proc = subprocess.Popen(
    [binary, "watch", "-A", "-l", f"fleet={prefix}", "--metrics-address", f"127.0.0.1:{port}",
     "--log-format", "json", "--audit-address", f"127.0.0.1:{sink['AUDIT_PORT']}",
     "--audit-tls-cert", sink["AUDIT_CERT"], "--audit-tls-key", sink["AUDIT_KEY"], "--audit-tokens", tokens],
    stdout=subprocess.DEVNULL, stderr=log)
deadline = time.monotonic() + 300
while probe.get(base, "/readyz")[0] != 200:
    if time.monotonic() > deadline or proc.poll() is not None:
        sys.exit("the watcher did not get ready")
    time.sleep(0.1)
subprocess.run([kubectl, "create", "clusterrolebinding", "bench-alice", "--clusterrole=edit", "--user=alice"],
               check=False, capture_output=True)
time.sleep(2)
rss_before = probe.memory(proc.pid)[0]

context = ssl.create_default_context(cafile=sink["AUDIT_CA"])
stop = threading.Event()
sent = {"events": 0, "batches": 0, "failed": 0}


def event(i):
    at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    return {"level": "Metadata", "auditID": f"noise-{i}", "stage": "ResponseComplete",
            "requestURI": f"/api/v1/namespaces/noise/configmaps/noise-{i % 5000}?fieldManager=controller",
            "verb": "update", "user": {"username": "system:serviceaccount:noise:controller", "groups": ["system:authenticated"]},
            "sourceIPs": ["10.1.2.3"], "userAgent": "controller/v1.0",
            "objectRef": {"resource": "configmaps", "namespace": "noise", "name": f"noise-{i % 5000}", "apiVersion": "v1"},
            "responseStatus": {"code": 200}, "requestReceivedTimestamp": at + ".000100Z", "stageTimestamp": at + ".000900Z"}


def stream():
    """RATE events a second in batches of 100, on one kept-alive connection (as the webhook)."""
    conn = http.client.HTTPSConnection("127.0.0.1", int(sink["AUDIT_PORT"]), context=context, timeout=10)
    headers = {"Authorization": "Bearer " + sink["AUDIT_TOKEN"], "Content-Type": "application/json"}
    per_batch, i = 100, 0
    interval = per_batch / rate
    next_at = time.monotonic()
    while not stop.is_set():
        body = json.dumps({"kind": "EventList", "apiVersion": "audit.k8s.io/v1",
                           "items": [event(i + k) for k in range(per_batch)]})
        i += per_batch
        try:
            conn.request("POST", "/audit", body, headers)
            r = conn.getresponse()
            r.read()
            sent["batches"] += 1
            sent["events"] += per_batch if r.status == 200 else 0
            sent["failed"] += r.status != 200
        except Exception:
            sent["failed"] += 1
            conn = http.client.HTTPSConnection("127.0.0.1", int(sink["AUDIT_PORT"]), context=context, timeout=10)
        next_at += interval
        time.sleep(max(0.0, next_at - time.monotonic()))


threads = [threading.Thread(target=stream)]
for t in threads:
    t.start()
peak = rss_before
lags = []
missed = 0
started = time.monotonic()
edit = 0
while time.monotonic() - started < seconds:
    r = edit % releases
    ns, name = f"{prefix}-ns{r % namespaces}", f"{prefix}-r{r}-o0"
    patch = json.dumps({"data": {"greeting": f"alice {edit}"}})
    subprocess.run([kubectl, "--as", "alice", "-n", ns, "patch", "configmap", name, "--type", "merge", "-p", patch],
                   check=True, capture_output=True)
    answered = time.monotonic()
    named = False
    while time.monotonic() - answered < 30:
        body = probe.get(base, "/drifts.json")[1]
        doc = json.loads(body) if body else {"drifts": []}
        if any(d["object"] == f"ConfigMap {ns}/{name}" and any("by alice" in m for m in d["madeBy"]) for d in doc["drifts"]):
            lags.append(time.monotonic() - answered)
            named = True
            break
        peak = max(peak, probe.memory(proc.pid)[0])
        time.sleep(0.05)
    missed += not named
    edit += 1
    time.sleep(max(0.0, 2.0 - (time.monotonic() - answered)))
stop.set()
for t in threads:
    t.join()
elapsed = time.monotonic() - started
metrics = probe.get(base, "/metrics")[1]
rss_after, hwm = probe.memory(proc.pid)
proc.terminate()
proc.wait(timeout=30)
lags.sort()
print(json.dumps({
    "releases": releases,
    "stream_events": sent["events"], "stream_batches": sent["batches"], "stream_failed": sent["failed"],
    "stream_rate": round(sent["events"] / elapsed),
    "edits": edit, "missed": missed,
    "lag_median": round(statistics.median(lags), 3) if lags else None,
    "lag_p99": round(lags[min(len(lags) - 1, int(round(0.99 * len(lags))) - 1)], 3) if lags else None,
    "lag_max": round(lags[-1], 3) if lags else None,
    "rss_before": round(rss_before, 1), "rss_peak": round(max(peak, hwm), 1), "rss_after": round(rss_after, 1),
    "kept_events": probe.sample(metrics, 'helm_drift_audit_window{unit="events"}'),
    "kept_bytes": probe.sample(metrics, 'helm_drift_audit_window{unit="bytes"}'),
    "rejected": probe.sample(metrics, 'helm_drift_rejected_inputs_total{input="audit"}'),
}))
