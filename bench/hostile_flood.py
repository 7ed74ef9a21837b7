"""The watcher against the hostile records of issue 34, COUNT of each kind in one namespace, as
anyone who may create Secrets (and Events) there could write them, plus EVENTS Events of about
900 KB: records that claim another namespace, records whose manifest repeats a 4 MB string
through YAML aliases (about 20 KB each), records whose values are 4 million zeros, forged
releases that opt in to repair (a quota and a RoleBinding), records naming a Secret of another
namespace. `helm-drift watch -n NAMESPACE --all --repair` must become ready, keep serving, and
stay under the chart's memory limit (256 MiB); its peak RSS is the figure.

    python3 bench/hostile_flood.py BINARY KUBECTL NAMESPACE COUNT EVENTS

Prints one JSON object.
"""
import base64
import gzip
import json
import subprocess
import sys
import time
import zlib

import probe

binary, kubectl, ns, count, events = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])


def kube(*args, stdin=None):
    return subprocess.run([kubectl, *args], input=stdin, check=True, capture_output=True)


def secret(name, release, data=None):
    data = data if data is not None else gzip.compress(json.dumps(release).encode(), 9)
    value = base64.b64encode(base64.b64encode(data)).decode()
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": f"sh.helm.release.v1.{name}.v1", "namespace": ns,
                         "labels": {"owner": "helm", "name": name, "status": "deployed", "version": "1",
                                    "helm-drift.io/repair": "true"}},
            "data": {"release": value}}


def release(name, manifest, namespace=None):
    return {"name": name, "namespace": namespace or ns, "version": 1, "info": {"status": "deployed"},
            "manifest": manifest}


def cm(name):
    return f"---\n# Source: f/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: b\n"


big = "x" * (4 * 1024 * 1024)
aliases = "\n".join(f"  k{i}: *s" for i in range(64))
kinds = {
    "claims": lambda n: release(n, cm(n), namespace="kube-system"),
    "hands": lambda n: release(n, f"---\n# Source: f/templates/q.yaml\napiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: {n}\nspec:\n  hard:\n    pods: \"1000\"\n---\n# Source: f/templates/rb.yaml\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: {n}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\nsubjects:\n  - kind: ServiceAccount\n    name: default\n    namespace: {ns}\n"),
    "eyes": lambda n: release(n, f"---\n# Source: f/templates/s.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: kube-system\nstringData:\n  password: guess{n}\n"),
}

subprocess.run([kubectl, "create", "namespace", ns], capture_output=True)
written = time.monotonic()


class Prefixed:
    """Records whose large part comes first: compressed once, each record's own tail (its name)
    compressed from a copy of the compressor's state (one gzip member, trailer included)."""

    def __init__(self, prefix):
        self.z = zlib.compressobj(9, zlib.DEFLATED, 31)
        self.head = self.z.compress(prefix.encode())

    def record(self, tail):
        z = self.z.copy()
        return self.head + z.compress(tail.encode()) + z.flush()


def tail(name):
    return json.dumps({"name": name, "namespace": ns, "version": 1, "info": {"status": "deployed"}})[1:]


prefixed = {
    "aliases": Prefixed('{"manifest": ' + json.dumps(f"---\n# Source: f/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  s: &s \"{big}\"\n{aliases}\n") + ", "),
    "values": Prefixed('{"config": ' + json.dumps({"zeros": [0] * 4_000_000}) + ', "manifest": ' + json.dumps(cm("v")) + ", "),
}
for kind in [*kinds, *prefixed]:
    for start in range(0, count, 50):
        items = []
        for i in range(start, min(count, start + 50)):
            name = f"{kind}{i}"
            if kind in prefixed:
                items.append(secret(name, None, prefixed[kind].record(tail(name))))
            else:
                items.append(secret(name, kinds[kind](name)))
        kube("create", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}).encode())
message = "m" * (900 * 1024)
for start in range(0, events, 5):
    items = [{"apiVersion": "v1", "kind": "Event",
              "metadata": {"name": f"flood{i}.drift-{'ab' * 8}", "namespace": ns,
                           "annotations": {"helm-drift.io/signature": "ab" * 32, "helm-drift.io/release": f"{ns}/x{i}"}},
              "involvedObject": {"apiVersion": "v1", "kind": "ConfigMap", "name": f"x{i}", "namespace": ns},
              "reason": "DriftDetected", "message": message, "type": "Warning",
              "source": {"component": "helm-drift"}, "reportingComponent": "helm-drift"}
             for i in range(start, min(events, start + 5))]
    kube("create", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}).encode())
written = time.monotonic() - written

port, base, log = probe.endpoint()
started = time.monotonic()
proc = subprocess.Popen([binary, "watch", "-n", ns, "--all", "--repair", "--metrics-address", f"127.0.0.1:{port}",
                         "--log-format", "json", "--resync", "10m", "--max-releases-per-namespace", "100000"],
                        stdout=subprocess.DEVNULL, stderr=log)


ready, alive, metrics, rss, peak = probe.settle(proc, base, started, 600)
# A person's check of the same namespace: its peak RSS, measured alone (a process of its own).
check_rss = subprocess.run([sys.executable, "-c",
    "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True); "
    "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
    binary, "check", "-n", ns, "--all", "-o", "json"], capture_output=True, text=True).stdout.split()
written_objects = subprocess.run([kubectl, "-n", ns, "get", "resourcequota,rolebinding", "-o", "name"],
                                 capture_output=True, text=True).stdout.split()
print(json.dumps({
    "per_kind": count,
    "kinds": [*kinds, *prefixed],
    "events": events,
    "write_s": round(written, 1),
    "ready_s": round(ready, 3),
    "serving_after_10s": alive,
    "rejected_records": probe.sample(metrics, 'helm_drift_rejected_inputs_total{input="record"}'),
    "rejected_events": probe.sample(metrics, 'helm_drift_rejected_inputs_total{input="event"}'),
    "refused_repairs": probe.sample(metrics, 'helm_drift_repairs_total{result="refused"}'),
    "releases_checked": probe.sample(metrics, "helm_drift_check_duration_seconds_count"),
    "objects_written_for_forged_records": len(written_objects),
    "check_exit": int(check_rss[0]),
    "check_peak_rss_mib": round(int(check_rss[1]) / 1024, 1),
    "rss_mib": round(rss, 1),
    "peak_rss_mib": round(peak, 1),
}))
