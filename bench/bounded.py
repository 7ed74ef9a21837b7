"""Bounded by construction (issue 45): every input issue 45 names at once, written as a tenant who
may only write Secrets, ConfigMaps and Events in their own namespaces could write them:

- METADATA records whose chart metadata holds 5.4 million zeros (about 16 MB of JSON, 21 KB
  gzipped), in namespace bnd-meta;
- TINY records of one ConfigMap each, in namespace bnd-tiny (their ConfigMaps are listed);
- EVENTS Events of helm-drift's reason with 900 KB messages, in bnd-tiny;
- BIG ConfigMaps and BIG Secrets of 900 KB each in bnd-unrelated, a namespace that holds no
  release (what kube-prometheus-stack's dashboards look like to a listing);
- CLUSTERS Argo CD cluster Secrets in bnd-clusters, a tenant namespace.

And issue 57's doors: 200 tiny ConfigMaps listed before the big ones, a baseline ConfigMap of
aliases next to tiny0 (800 MB once expanded), 256 forged watcher announcements claiming every
namespace in bnd-announce. And issue 70's floods: FLOOD superseded records of release `flood`
(labelled as Helm labels them, each with a 250 KiB annotation) before its deployed one, in
bnd-flood; a baseline ConfigMap of 3,300 salted entries (100,000 PBKDF2 iterations each) for
the one drifted Secret of release `sec0`, in bnd-base.

Then `helm-drift watch -A --repair` (its peak RSS beside the chart's 256 MiB limit), `check -A`
over the same cluster, `check -A --clusters argocd` (Argo CD's namespace by default: the
tenant's cluster Secrets are no member), `check tiny0 --baseline cluster` (refused, naming the
ConfigMap) and `pause tiny0` (refused: no announcement is read outside the operator's namespace).

    python3 bench/bounded.py BINARY KUBECTL METADATA TINY EVENTS BIG CLUSTERS FLOOD

Prints one JSON object.
"""
import base64
import gzip
import json
import os
import random
import subprocess
import sys
import time
import zlib

import probe

binary, kubectl = sys.argv[1], sys.argv[2]
metadata, tiny, events, big, clusters, flood = (int(a) for a in sys.argv[3:9])
HPAS = 300


def kube(*args, stdin=None):
    return subprocess.run([kubectl, *args], input=stdin, check=True, capture_output=True)


def create(items):
    for start in range(0, len(items), 20):
        doc = {"apiVersion": "v1", "kind": "List", "items": items[start:start + 20]}
        kube("create", "-f", "-", stdin=json.dumps(doc).encode())


def secret(ns, name, data, version=1, status="deployed", annotations=None):
    value = base64.b64encode(base64.b64encode(data)).decode()
    return {"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": f"sh.helm.release.v1.{name}.v{version}", "namespace": ns,
                         "labels": {"owner": "helm", "name": name, "status": status, "version": str(version)},
                         "annotations": annotations or {}},
            "data": {"release": value}}


def record(ns, name, manifest, version=1):
    return gzip.compress(json.dumps({"name": name, "namespace": ns, "version": version,
                                     "info": {"status": "deployed"}, "manifest": manifest}).encode())


def cm(name):
    return f"---\n# Source: t/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: b\n"


for ns in ["bnd-meta", "bnd-tiny", "bnd-unrelated", "bnd-clusters", "bnd-flood", "bnd-base", "bnd-hpa"]:
    subprocess.run([kubectl, "create", "namespace", ns], capture_output=True)
written = time.monotonic()

# The metadata records: one compressed prefix, each record's own tail after it.
z = zlib.compressobj(9, zlib.DEFLATED, 31)
head = z.compress(('{"chart": {"metadata": {"name": "m", "version": "1.0.0", "zeros": ['
                   + ",".join(["0"] * 5_400_000) + ']}}, "manifest": ' + json.dumps(cm("m")) + ", ").encode())
items = []
for i in range(metadata):
    c = z.copy()
    tail = json.dumps({"name": f"meta{i}", "namespace": "bnd-meta", "version": 1, "info": {"status": "deployed"}})[1:]
    items.append(secret("bnd-meta", f"meta{i}", head + c.compress(tail.encode()) + c.flush()))
create(items)
create([secret("bnd-tiny", f"tiny{i}", gzip.compress(json.dumps(
    {"name": f"tiny{i}", "namespace": "bnd-tiny", "version": 1, "info": {"status": "deployed"},
     "manifest": cm(f"tiny{i}")}).encode())) for i in range(tiny)])
message = "m" * (900 * 1024)
create([{"apiVersion": "v1", "kind": "Event",
         "metadata": {"name": f"flood{i}.drift-{'ab' * 8}", "namespace": "bnd-tiny",
                      "annotations": {"helm-drift.io/signature": "ab" * 32, "helm-drift.io/release": f"bnd-tiny/x{i}"}},
         "involvedObject": {"apiVersion": "v1", "kind": "ConfigMap", "name": f"x{i}", "namespace": "bnd-tiny"},
         "reason": "DriftDetected", "message": message, "type": "Warning",
         "source": {"component": "helm-drift"}, "reportingComponent": "helm-drift"} for i in range(events)])
rng = random.Random(45)
blob = base64.b64encode(rng.randbytes(675 * 1024)).decode()  # 900 KB of text
create([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"dashboard{i}", "namespace": "bnd-unrelated"},
         "data": {"dashboard.json": blob}} for i in range(big)])
create([{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"blob{i}", "namespace": "bnd-unrelated"},
         "stringData": {"blob": blob}} for i in range(big)])
create([{"apiVersion": "v1", "kind": "Secret",
         "metadata": {"name": f"cluster{i}", "namespace": "bnd-clusters",
                      "labels": {"argocd.argoproj.io/secret-type": "cluster"}},
         "stringData": {"name": f"c{i}", "server": f"https://127.0.0.1:{1 + i}",
                        "config": json.dumps({"bearerToken": "t", "tlsClientConfig": {"insecure": True}})}}
        for i in range(clusters)])
# Issue 57's doors. Tiny ConfigMaps listed before the 900 KB ones (a page sized from them would
# ask for hundreds of large ones); a baseline ConfigMap of aliases next to a release (8,000 of a
# 100 KB string: 800 MB expanded); 256 forged watcher announcements claiming every namespace.
create([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"a{i:03}", "namespace": "bnd-unrelated"},
         "data": {"a": "b"}} for i in range(200)])
bomb = "apiVersion: helm-drift.io/v1\nkind: Baseline\nx: &a \"" + "x" * 100_000 + "\"\nentries: [" + ",".join(["*a"] * 8000) + "]\n"
create([{"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "helm-drift-baseline.tiny0", "namespace": "bnd-tiny", "labels": {"helm-drift.io/baseline": "tiny0"}},
         "data": {"baseline.yaml": bomb}}])
subprocess.run([kubectl, "create", "namespace", "bnd-announce"], capture_output=True)
now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
create([{"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": f"helm-drift-watcher-f{i:03}", "namespace": "bnd-announce", "labels": {"helm-drift.io/watcher": "true"}},
         "data": {"namespaces": "*", "fleet": "false", "renewed": now, "everySeconds": "86400", "pad": "p" * 4000}}
        for i in range(256)])
# Issue 70's floods. Superseded records of one release, each with a 250 KiB annotation, before
# its deployed revision; a baseline of 3,300 salted entries for one drifted Secret.
pad = {"pad": "p" * (250 * 1024)}
create([secret("bnd-flood", "flood", b"x", version=v, status="superseded", annotations=pad) for v in range(1, flood + 1)])
create([secret("bnd-flood", "flood", record("bnd-flood", "flood", cm("flood0"), flood + 1), version=flood + 1)])
kube("-n", "bnd-flood", "create", "configmap", "flood0", "--from-literal=a=b")
# HorizontalPodAutoscalers anyone who may make them in a release's namespace can make, each with
# a 250 KiB annotation: listed for the release's replica rules, each kept only as its target.
create([secret("bnd-hpa", "hpa", record("bnd-hpa", "hpa", cm("hpa0")))])
kube("-n", "bnd-hpa", "create", "configmap", "hpa0", "--from-literal=a=b")
create([{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
         "metadata": {"name": f"hpa{i}", "namespace": "bnd-hpa", "annotations": pad},
         "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": f"d{i}"},
                  "minReplicas": 1, "maxReplicas": 2}} for i in range(HPAS)])
creds = "---\n# Source: s/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: sec0-creds\nstringData:\n  password: recorded\n"
create([secret("bnd-base", "sec0", record("bnd-base", "sec0", creds))])
kube("-n", "bnd-base", "create", "secret", "generic", "sec0-creds", "--from-literal=password=by-hand")
# The salted flood: the entry `accept` writes for the drift, its hash replaced by a well-formed
# wrong one of 100,000 iterations, 3,300 times.
subprocess.run([binary, "accept", "sec0", "-n", "bnd-base", "--baseline", "cluster"], check=True, capture_output=True)
cm_json = json.loads(kube("-n", "bnd-base", "get", "configmap", "helm-drift-baseline.sec0", "-o", "json").stdout)
text = cm_json["data"]["baseline.yaml"]
first = text.index("- ", text.index("entries:"))
one = text[first:].rstrip("\n")
h = one.index("pbkdf2-sha256$")
end = min([i for i in (one.find(c, h) for c in "\n'\"") if i >= 0] or [len(one)])
forged = [one[:h] + f"pbkdf2-sha256$100000${i:04x}$" + "00" * 32 + one[end:] for i in range(3300)]  # each its own salt
salted = min(3300, (1_000_000 - first) // (len(forged[0]) + 1))  # as many as a ConfigMap holds
patch_file = os.path.join(os.environ.get("TMPDIR", "/tmp"), "bounded-salted-patch.json")
with open(patch_file, "w") as f:
    json.dump({"data": {"baseline.yaml": text[:first] + "\n".join(forged[:salted]) + "\n"}}, f)
kube("-n", "bnd-base", "patch", "configmap", "helm-drift-baseline.sec0", "--type", "merge", "--patch-file", patch_file)
written = time.monotonic() - written


def peak_of(*args, said=None):
    """Exit code, peak RSS (MiB) and what it said (the last line of stderr, or the first of
    stdout, among its first 20,000 characters, holding `said`) of one run of the binary, a process of its own; its seconds in
    `last_seconds`."""
    global last_seconds
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-c",
        "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True); "
        "sys.stderr.buffer.write(r.stderr[-2000:]); sys.stderr.buffer.write(b'\\n@@\\n' + r.stdout[:20000]); "
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)", binary, *args],
        capture_output=True, text=True)
    last_seconds = round(time.monotonic() - started, 2)
    code, rss = out.stdout.split()
    err, _, stdout = out.stderr.partition("\n@@\n")
    shown = [line.strip() for line in stdout.splitlines() if said and said in line][:1] or err.strip().splitlines()[-1:]
    return int(code), round(int(rss) / 1024, 1), shown


port, base, log = probe.endpoint()
started = time.monotonic()
proc = subprocess.Popen([binary, "watch", "-A", "--repair", "--metrics-address", f"127.0.0.1:{port}",
                         "--log-format", "json", "--resync", "10m", "--max-releases-per-namespace", "100000"],
                        stdout=subprocess.DEVNULL, stderr=log)
ready, alive, metrics, rss, peak = probe.settle(proc, base, started, 900)
check_exit, check_peak, _ = peak_of("check", "-A", "-o", "json")
fleet_exit, fleet_peak, fleet_said = peak_of("check", "-A", "--clusters", "argocd")
baseline_exit, baseline_peak, baseline_said = peak_of("check", "tiny0", "-n", "bnd-tiny", "--baseline", "cluster",
                                                     "--trust-namespace", "bnd-tiny")
untrusted_exit, untrusted_peak, untrusted_said = peak_of("check", "tiny0", "-n", "bnd-tiny", "--baseline", "cluster",
                                                         said="ignored")
flood_exit, flood_peak, flood_said = peak_of("check", "flood", "-n", "bnd-flood")
flood_s = last_seconds
salted_exit, salted_peak, salted_said = peak_of("check", "sec0", "-n", "bnd-base", "--baseline", "cluster",
                                                "--trust-namespace", "bnd-base", said="salted")
salted_s = last_seconds
hpa_exit, hpa_peak, _ = peak_of("check", "hpa", "-n", "bnd-hpa")
hpa_s = last_seconds
pause_exit, pause_peak, pause_said = peak_of("pause", "tiny0", "-n", "bnd-tiny", "--for", "60s", "--reason", "INC-1")
pauses_written = subprocess.run([kubectl, "get", "configmaps", "-A", "-l", "helm-drift.io/pause", "-o", "name"],
                                capture_output=True, text=True).stdout.split()
print(json.dumps({
    "metadata_records": metadata, "tiny_records": tiny, "events": events, "big_objects": 2 * big,
    "tenant_cluster_secrets": clusters, "write_s": round(written, 1),
    "ready_s": round(ready, 3), "serving_after_10s": alive,
    "rejected_records": probe.sample(metrics, 'helm_drift_rejected_inputs_total{input="record"}'),
    "rss_mib": round(rss, 1), "peak_rss_mib": round(peak, 1),
    "check_exit": check_exit, "check_peak_rss_mib": check_peak,
    "fleet_exit": fleet_exit, "fleet_peak_rss_mib": fleet_peak, "fleet_said": fleet_said,
    "baseline_exit": baseline_exit, "baseline_peak_rss_mib": baseline_peak, "baseline_said": baseline_said,
    "untrusted_exit": untrusted_exit, "untrusted_peak_rss_mib": untrusted_peak, "untrusted_said": untrusted_said,
    "flood_records": flood, "flood_exit": flood_exit, "flood_peak_rss_mib": flood_peak, "flood_s": flood_s,
    "flood_said": flood_said,
    "hpas": HPAS, "hpa_exit": hpa_exit, "hpa_peak_rss_mib": hpa_peak, "hpa_s": hpa_s,
    "salted_entries": salted, "salted_exit": salted_exit, "salted_peak_rss_mib": salted_peak, "salted_s": salted_s, "salted_said": salted_said,
    "pause_exit": pause_exit, "pause_peak_rss_mib": pause_peak, "pause_said": pause_said,
    "pauses_written": len(pauses_written),
}))
