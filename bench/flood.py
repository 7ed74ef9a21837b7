"""The watcher under a flood of forged release records (issue 20): COUNT Secrets of about 1 MiB
each in one namespace, written as anyone who may create Secrets there could write them: half are
gzip bombs past the decompression cap, half hold one ConfigMap of about 1 MiB of random text.
`helm-drift watch -n NAMESPACE --all` must become ready, keep serving, and count the records it
rejected; its peak RSS is the figure (called by scripts/bench.sh).

    python3 bench/flood.py BINARY KUBECTL NAMESPACE COUNT

Prints one JSON object.
"""
import base64
import gzip
import json
import os
import subprocess
import sys
import time

import probe

binary, kubectl, ns, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])


def kube(*args, stdin=None):
    return subprocess.run([kubectl, *args], input=stdin, check=True, capture_output=True)


# A Secret holds at most 1 MiB; its value is base64 of base64 of the gzip data (x 1.78).
bomb = gzip.compress(b"\0" * (560 * 1024 * 1024), compresslevel=9)
assert len(bomb) * 1.78 < 1024 * 1024, len(bomb)


def record(i):
    name = f"flood{i}"
    if i % 2 == 0:
        data = bomb
    else:
        text = base64.b64encode(os.urandom(420 * 1024)).decode()
        manifest = f"---\n# Source: flood/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  blob: {text}\n"
        release = {"name": name, "namespace": ns, "version": 1, "info": {"status": "deployed"}, "manifest": manifest}
        data = gzip.compress(json.dumps(release).encode())
    value = base64.b64encode(base64.b64encode(data)).decode()
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": f"sh.helm.release.v1.{name}.v1", "namespace": ns,
                         "labels": {"owner": "helm", "name": name, "status": "deployed", "version": "1"}},
            "data": {"release": value}}


subprocess.run([kubectl, "create", "namespace", ns], capture_output=True)
written = time.monotonic()
for i in range(count):
    kube("apply", "--server-side", "-f", "-", stdin=json.dumps(record(i)).encode())
written = time.monotonic() - written

port, base, log = probe.endpoint()
started = time.monotonic()
proc = subprocess.Popen([binary, "watch", "-n", ns, "--all", "--metrics-address", f"127.0.0.1:{port}",
                         "--log-format", "json", "--resync", "10m"], stdout=subprocess.DEVNULL, stderr=log)


ready, alive, metrics, rss, peak = probe.settle(proc, base, started, 300)
print(json.dumps({
    "records": count,
    "write_s": round(written, 1),
    "ready_s": round(ready, 3),
    "serving_after_10s": alive,
    "rejected_records": probe.sample(metrics, 'helm_drift_rejected_inputs_total{input="record"}'),
    "releases_checked": probe.sample(metrics, "helm_drift_check_duration_seconds_count"),
    "rss_mib": round(rss, 1),
    "peak_rss_mib": round(peak, 1),
}))
