"""F5 (issue 37) and F6 (issue 84): one watcher over a fleet of inventory entries (called by
scripts/bench.sh).

    python3 bench/fleet.py BINARY KUBECTL CRD PREFIX RELEASES NAMESPACES SIZES IDLE_SECONDS EDITS RESULTS.md [F5|F6]

Cluster API `Cluster` objects and kubeconfig Secrets are written in namespace f5-mgmt, every
entry pointing at the same local API server under another name (each entry is watched as a
cluster of its own: its own watches, checks and series). For each size in SIZES (ascending,
comma-separated) one watcher runs `watch -A -l fleet=PREFIX --clusters capi`: time until every
entry's first full check is done, API requests and CPU at rest, RSS, and edit-to-metric (an
edit of one release, timed until each entry's series says drifted; p99 over entries and edits).
Writes the F5 section of RESULTS.md with the growth per added cluster, and prints the figures.
"""
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time

import probe
import rows as timed

binary, kubectl, crd, prefix = sys.argv[1:5]
releases, namespaces = int(sys.argv[5]), int(sys.argv[6])
sizes = [int(s) for s in sys.argv[7].split(",")]
idle, edits, results_path = int(sys.argv[8]), int(sys.argv[9]), sys.argv[10]
section_name = sys.argv[11] if len(sys.argv) > 11 else "F5"
MGMT = f"{section_name.lower()}-mgmt"
# F6own: each entry watches only its own namespace's releases (its kubeconfig's namespace, `watch
# --all`), as each workload cluster holds only its own: an edit is then seen by one entry alone.
OWN = section_name == "F6own"
# F6light (issue 92): only replicas (BENCH_REPLICAS, default 4) sharing the largest size, each
# entry a light workload cluster (the fleet example's `light`: one release of 5 objects).
LIGHT = section_name == "F6light"
# How long a size may take to be ready, and an edit to be seen by every entry.
READY_LIMIT, SEEN_LIMIT = 1800, 120


def kube(*args, stdin=None):
    return subprocess.run([kubectl, *args], input=stdin, check=True, capture_output=True, text=True).stdout


def metrics(base):
    out = {}
    for line in probe.get(base, "/metrics")[1].splitlines():
        if line and not line.startswith("#"):
            series, _, value = line.rpartition(" ")
            out[series] = float(value)
    return out


def apiserver():
    """The API server's own counts (its /metrics): requests and response bytes by (verb, resource);
    `(none)` is a request of no resource (a member's probe of /version, this scrape)."""
    counts, sizes = {}, {}
    for line in kube("get", "--raw", "/metrics").splitlines():
        for family, into in (("apiserver_request_total{", counts), ("apiserver_response_sizes_sum{", sizes)):
            if line.startswith(family):
                labels = dict(re.findall(r'(\w+)="([^"]*)"', line.split("}")[0]))
                key = (labels.get("verb", ""), labels.get("resource") or "(none)")
                into[key] = into.get(key, 0) + float(line.rsplit(" ", 1)[1])
    return counts, sizes


def server_at_rest(before, after, seconds):
    """Requests a second by `VERB resource` besides watches, and response bytes a second, between
    two readings of the API server's counts: the management cluster's load (the resources), and
    apart the members' probes (`(none)`: every entry is this API server under another name)."""
    watching = ("WATCH", "WATCHLIST")
    rates = {}
    for key, v in after[0].items():
        d = v - before[0].get(key, 0)
        if key[0] not in watching and d > 0:
            rates[f"{key[0]} {key[1]}"] = round(d / seconds, 3)
    sent = sum(v - before[1].get(k, 0) for k, v in after[1].items() if k[0] not in watching and k[1] != "(none)")
    management = round(sum(r for k, r in rates.items() if not k.endswith("(none)")), 3)
    return {"by_verb_resource": rates, "management_per_s": management, "management_bytes_per_s": round(sent / seconds)}


def requests(m):
    return {k.split('"')[1]: v for k, v in m.items() if k.startswith("helm_drift_api_requests_total{")}


def percentile(values, q):
    return values[min(len(values) - 1, max(0, int(round(q * len(values))) - 1))]


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_kubeconfig(kubeconfig, i):
    """The kubeconfig of entry `i` of F6own: its context's namespace is the entry's own."""
    config = json.loads(kubeconfig)
    for c in config.get("contexts", []):
        c["context"]["namespace"] = f"{prefix}-ns{i}"
    return json.dumps(config)


def add_clusters(first, last, kubeconfig):
    docs, secrets = [], []
    for i in range(first, last):
        docs.append(f"apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {{name: c{i}, namespace: {MGMT}}}\n"
                    "spec: {controlPlaneRef: {apiGroup: controlplane.cluster.x-k8s.io, kind: KubeadmControlPlane, name: cp}}\n")
        secrets.append(json.dumps({"apiVersion": "v1", "kind": "Secret",
                                   "metadata": {"name": f"c{i}-kubeconfig", "namespace": MGMT},
                                   "stringData": {"value": own_kubeconfig(kubeconfig, i) if OWN else kubeconfig}}))
    kube("apply", "-f", "-", stdin="---\n".join(docs))
    # Server-side, as Cluster API writes them: no last-applied copy of the kubeconfig in an annotation.
    kube("apply", "--server-side", "--field-manager", "capi", "-f", "-", stdin="\n".join(secrets))
    if LIGHT:
        # Thousands of entries: their status in one request per 500, as Cluster API's controller owns it.
        for at in range(first, last, 500):
            ready = [json.dumps({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                                 "metadata": {"name": f"c{i}", "namespace": MGMT},
                                 "status": {"initialization": {"controlPlaneInitialized": True}}})
                     for i in range(at, min(last, at + 500))]
            kube("apply", "--server-side", "--field-manager", "capi", "--subresource=status", "-f", "-", stdin="\n".join(ready))
        return
    for i in range(first, last):
        kube("-n", MGMT, "patch", "cluster.cluster.x-k8s.io", f"c{i}", "--subresource=status", "--type=merge",
             "-p", '{"status":{"initialization":{"controlPlaneInitialized":true}}}')


def forget_events():
    """Deletes the Events helm-drift wrote (one request per namespace): every entry is the same
    API server here, so each member of the next run would read every earlier member's Events at
    its start, where a real member reads its own cluster's."""
    namespaces = kube("get", "events", "-A", "--field-selector", "source=helm-drift",
                      "-o", "jsonpath={.items[*].metadata.namespace}").split()
    for ns in sorted(set(namespaces)):
        kube("delete", "--raw", f"/api/v1/namespaces/{ns}/events?fieldSelector=source%3Dhelm-drift")


def seen(base, series, value, since, what):
    """Seconds from `since` until each series reads `value`."""
    waiting, took = set(series), []
    while waiting:
        m = metrics(base)
        now = time.monotonic()
        for s in [s for s in waiting if m.get(s) == value]:
            took.append(now - since)
            waiting.discard(s)
        if waiting and now - since > SEEN_LIMIT:
            raise SystemExit(f"{what} not seen by {len(waiting)} entries")
        time.sleep(0.05)
    return took


def run(n, first_edit):
    port, base, log = probe.endpoint()
    started = time.monotonic()
    proc = subprocess.Popen(
        [binary, "watch", "--all" if OWN else "-A", "-l", f"fleet={prefix}", "--clusters", "capi", "--clusters-namespace", MGMT,
         "--lease-namespace", MGMT, "--clusters-max", str(n), "--metrics-address", f"127.0.0.1:{port}", "--log-format", "json",
         "--resync", "10m"], stdout=subprocess.DEVNULL, stderr=log)
    try:
        ready_series = [f'helm_drift_ready{{cluster="{MGMT}/c{i}"}}' for i in range(n)]
        while True:
            m = metrics(base)
            if all(m.get(s) == 1.0 for s in ready_series):
                break
            if proc.poll() is not None or time.monotonic() - started > READY_LIMIT:
                raise SystemExit(f"{n} clusters: not every entry ready")
            time.sleep(0.1)
        ready = time.monotonic() - started
        at_ready = requests(m)
        checked = sum(1 for k in m if k.startswith("helm_drift_release_drifted{"))
        time.sleep(5)  # let the first lists' touches settle
        before, cpu0, t0, server0 = requests(metrics(base)), cpu_seconds(proc.pid), time.monotonic(), apiserver()
        time.sleep(idle)
        after, cpu1, t1, server1 = requests(metrics(base)), cpu_seconds(proc.pid), time.monotonic(), apiserver()
        minutes = (t1 - t0) / 60
        at_rest = {v: round((after.get(v, 0) - before.get(v, 0)) / minutes, 1) for v in after if v != "watch"}
        rss, _ = probe.memory(proc.pid)
        latencies = []
        # F6own: one release of a different entry each time (release r lives in namespace r %
        # namespaces, the namespace of entry r alone).
        picks = [(k * 37) % n for k in range(edits)] if OWN else range(first_edit, first_edit + edits)
        for r in picks:
            r %= releases
            ns, release = f"{prefix}-ns{r % namespaces}", f"{prefix}-r{r}"
            cm = ["-n", ns, "patch", "configmap", f"{release}-o0", "--type", "merge", "-p"]
            was = kube("-n", ns, "get", "configmap", f"{release}-o0", "-o", "jsonpath={.data.greeting}")
            kube(*cm, json.dumps({"data": {"greeting": f"{section_name.lower()}-edit-{r}"}}))
            seeing = [r % namespaces] if OWN else range(n)
            edited, series = time.monotonic(), {
                f'helm_drift_release_drifted{{cluster="{MGMT}/c{i}",namespace="{ns}",release="{release}"}}' for i in seeing}
            latencies += seen(base, series, 1.0, edited, f"{n} clusters: drift of {release}")
            # Put back, and wait until every entry says in sync again (the next edit starts clean).
            kube(*cm, json.dumps({"data": {"greeting": was}}))
            seen(base, series, 0.0, time.monotonic(), f"{n} clusters: the repair of {release}")
        latencies.sort()
        _, peak = probe.memory(proc.pid)
        return {
            "clusters": n, "releases": checked, "ready_s": round(ready, 2),
            "requests_to_ready": {k: int(v) for k, v in at_ready.items() if v},
            "at_rest_per_minute": {k: v for k, v in at_rest.items() if v},
            "server_at_rest": server_at_rest(server0, server1, t1 - t0),
            "idle_cpu_percent": round(100 * (cpu1 - cpu0) / (t1 - t0), 2),
            "rss_mib": round(rss, 1), "peak_rss_mib": round(peak, 1),
            "edit_to_metric_median_s": round(statistics.median(latencies), 3),
            "edit_to_metric_p99_s": round(percentile(latencies, 0.99), 3),
            "edit_to_metric_max_s": round(latencies[-1], 3), "samples": len(latencies),
        }
    finally:
        proc.terminate()
        proc.wait(timeout=60)


kube("apply", "--server-side", "-f", crd)
deadline = time.monotonic() + 60
while subprocess.run([kubectl, "get", "--raw", "/apis/cluster.x-k8s.io/v1beta2"], capture_output=True).returncode:
    if time.monotonic() > deadline:
        raise SystemExit("the Cluster CRD is not served")
    time.sleep(0.2)
subprocess.run([kubectl, "create", "namespace", MGMT], capture_output=True)
kubeconfig = kube("config", "view", "--raw", "--flatten", "--minify", *(["-o", "json"] if OWN else []))
figures, have = [], 0
for i, n in enumerate(sizes):
    forget_events()
    add_clusters(have, n, kubeconfig)
    have = n
    if LIGHT:
        continue
    figures.append(run(n, i * edits))
    print(json.dumps(figures[-1]), file=sys.stderr)


def replicas(n, k):
    """`k` replicas sharing the `n` entries on Leases: each one's share and RSS once every entry
    is ready in exactly one replica; then one killed (SIGKILL: no Lease given back), and the time
    until the others have taken every entry again, with their RSS then."""
    procs = []
    for _ in range(k):
        port, base, log = probe.endpoint()
        proc = subprocess.Popen(
            [binary, "watch", "-A", "-l", f"fleet={prefix}", "--clusters", "capi", "--clusters-namespace", MGMT,
             "--clusters-max", str(n), "--leader-elect", "--lease-name", "f6", "--lease-namespace", MGMT,
             "--lease-duration", "15s", "--metrics-address", f"127.0.0.1:{port}", "--log-format", "json",
             "--resync", "10m"], stdout=subprocess.DEVNULL, stderr=log)
        procs.append((proc, base))

    def shares(alive):
        counts = []
        for proc, base in alive:
            m = metrics(base)
            counts.append(sum(1 for i in range(n) if m.get(f'helm_drift_ready{{cluster="{MGMT}/c{i}"}}') == 1.0))
        return counts

    def settled(alive, what):
        started = time.monotonic()
        while sum(shares(alive)) != n:
            if time.monotonic() - started > READY_LIMIT:
                raise SystemExit(f"{what}: not every entry taken")
            time.sleep(1)
        return time.monotonic() - started

    try:
        ready = settled(procs, f"{k} replicas")
        time.sleep(10)
        server0, t0 = apiserver(), time.monotonic()
        time.sleep(idle)
        rest = server_at_rest(server0, apiserver(), time.monotonic() - t0)
        before = {"ready_s": round(ready, 1), "shares": shares(procs), "server_at_rest": rest,
                  "rss_mib": [round(probe.memory(p.pid)[0], 1) for p, _ in procs],
                  "peak_rss_mib": [round(probe.memory(p.pid)[1], 1) for p, _ in procs]}
        killed, _ = procs.pop(0)
        killed.kill()
        killed.wait()
        took = settled(procs, "after a replica was killed")
        after = {"taken_over_s": round(took, 1), "shares": shares(procs),
                 "peak_rss_mib": [round(probe.memory(p.pid)[1], 1) for p, _ in procs]}
        return {"entries": n, "replicas": k, "before": before, "after": after}
    finally:
        for proc, _ in procs:
            proc.terminate()
            proc.wait(timeout=60)


def said(rest):
    """The management API server's load at rest, in words."""
    parts = " ".join(f"{k}={v}" for k, v in sorted(rest["by_verb_resource"].items()) if not k.endswith("(none)"))
    return f"{rest['management_per_s']}/s ({parts or 'none'}), {rest['management_bytes_per_s']} B/s"


if LIGHT:
    k = int(os.environ.get("BENCH_REPLICAS") or 4)
    light = replicas(sizes[-1], k)
    print(json.dumps(light), file=sys.stderr)
    b, a = light["before"], light["after"]
    per_entry = [round(r / s, 2) for r, s in zip(b["peak_rss_mib"], b["shares"]) if s]
    section = "\n".join([
        "## F6light: 5,000 light clusters in 4 replicas (issue 92)",
        "",
        f"Measured {datetime.date.today()} on the same 2-core machine (`BENCH_ONLY=f6light scripts/bench.sh`):",
        f"{k} replicas of `helm-drift watch -A --clusters capi --leader-elect` sharing a Cluster API inventory of",
        f"{sizes[-1]:,} entries, every entry pointing at the same local API server under another name and watched as a",
        f"cluster of its own, each holding {releases} release(s) of 5 objects (a light workload cluster). The API server,",
        f"etcd and the replicas share the 2 cores. Goal: each replica under 1 GiB.",
        "",
        "| replicas | entries | every entry taken | shares | RSS (peak) per replica | peak RSS per entry of a share | management API server at rest |",
        "|---|---|---|---|---|---|---|",
        f"| {k} | {sizes[-1]} | {b['ready_s']} s | {', '.join(map(str, b['shares']))} | "
        f"{', '.join(f'{r} ({p}) MiB' for r, p in zip(b['rss_mib'], b['peak_rss_mib']))} | "
        f"{', '.join(f'{e} MiB' for e in per_entry)} | {said(b['server_at_rest'])} |",
        "",
        f"One replica killed (no Lease given back): the others had every entry again after {a['taken_over_s']} s,",
        f"shares {', '.join(map(str, a['shares']))}, peaks {', '.join(f'{r} MiB' for r in a['peak_rss_mib'])}.",
    ]) + "\n"
    timed.replace_section(results_path, "F6light: ", section)
    print(json.dumps({"light": light}))
    sys.exit(0)

small, large = figures[0], figures[-1]
shared = None
if os.environ.get("BENCH_REPLICAS"):
    forget_events()
    shared = replicas(large["clusters"], int(os.environ["BENCH_REPLICAS"]))
if shared:
    print(json.dumps(shared), file=sys.stderr)
span = max(1, large["clusters"] - small["clusters"])
growth = {
    "rss_mib_per_cluster": round((large["peak_rss_mib"] - small["peak_rss_mib"]) / span, 2),
    "rest_rss_mib_per_cluster": round((large["rss_mib"] - small["rss_mib"]) / span, 2),
    "ready_s_per_cluster": round((large["ready_s"] - small["ready_s"]) / span, 3),
}
if section_name == "F5":
    lines = [
        "## F5: one watcher for a fleet (issue 37)",
        "",
        f"Measured {datetime.date.today()} on the same 2-core machine (`BENCH_ONLY=f5 scripts/bench.sh`): one",
        f"`helm-drift watch -A --clusters capi` over Cluster API inventories of {', '.join(str(s) for s in sizes)} entries,",
        "every entry pointing at the same local API server under another name and watched as a cluster of",
        f"its own (its own watches, checks and series), each with {releases} releases x 20 objects in {namespaces}",
        "namespaces: so the largest watches 100 releases times its entries, all against one API server on",
        f"the same 2 cores. Idle over {idle} s; edit-to-metric: {edits} edits of one release each, timed until",
        "every entry's series says drifted (p99 over every entry and edit).",
        "",
    ]
elif OWN:
    lines = [
        "## F6own: a fleet whose clusters each hold their own releases (issue 84)",
        "",
        f"Measured {datetime.date.today()} on the same 2-core machine (`BENCH_ONLY=f6own scripts/bench.sh`): one",
        f"`helm-drift watch --all --clusters capi` over a Cluster API inventory of {', '.join(str(s) for s in sizes)} entries,",
        "every entry pointing at the same local API server under another name, its kubeconfig's namespace its own",
        f"({namespaces} namespaces of {releases // namespaces} releases x 20 objects): each entry watches its own releases only,",
        "as a workload cluster holds only its own, so an edit is seen by one entry, as in a real fleet. The",
        f"API server (holding all {releases:,} releases), etcd and the watcher share the 2 cores. Idle over {idle} s;",
        f"edit-to-metric: {edits} edits, each of a release of another entry, timed until that entry's series",
        "says drifted, then put back.",
        "",
    ]
else:
    lines = [
        "## F6: a fleet the size of a Cluster API management cluster (issue 84)",
        "",
        f"Measured {datetime.date.today()} on the same 2-core machine (`BENCH_ONLY=f6 scripts/bench.sh`): one",
        f"`helm-drift watch -A --clusters capi` over Cluster API inventories of {', '.join(str(s) for s in sizes)} entries",
        "(Clusters with kubeconfig Secrets), every entry pointing at the same local API server under another",
        f"name and watched as a cluster of its own, each holding {releases} releases x 20 objects in {namespaces} namespaces",
        "(a workload cluster's add-ons). The API server, etcd and the watcher share the 2 cores. Goals at",
        "1,000 entries: every entry checked within 60 s, peak RSS under 1 GiB, idle CPU under 5 % of a core,",
        f"edit-to-metric under 2 s at p99. Idle over {idle} s; edit-to-metric: {edits} edits of one release, each",
        "timed until every entry's series says drifted (p99 over every entry and edit), then put back.",
        "",
    ]
lines += [
    "| entries | releases watched | time to ready (every entry checked) | requests until ready | requests at rest per minute (besides watches) | management API server at rest: requests a second besides watches (by verb and resource), bytes a second | idle CPU | RSS (peak) | edit-to-metric median, p99 (max) |",
    "|---|---|---|---|---|---|---|---|---|",
]


for f in figures:
    to_ready = " ".join(f"{k}={v}" for k, v in sorted(f["requests_to_ready"].items()))
    rest = " ".join(f"{k}={v}" for k, v in sorted(f["at_rest_per_minute"].items())) or "none"
    lines.append(
        f"| {f['clusters']} | {f['releases']} | {f['ready_s']} s | {to_ready} | {rest} | {said(f['server_at_rest'])} | {f['idle_cpu_percent']} % of a core "
        f"| {f['rss_mib']} MiB ({f['peak_rss_mib']} MiB) | {f['edit_to_metric_median_s']} s, {f['edit_to_metric_p99_s']} s ({f['edit_to_metric_max_s']} s) |")
if len(figures) > 1:
    lines += [
        "",
        f"Growth per added entry (from {small['clusters']} to {large['clusters']}): {growth['rss_mib_per_cluster']} MiB of peak RSS ({growth['rest_rss_mib_per_cluster']} MiB at rest) and "
        f"{growth['ready_s_per_cluster']} s of time to ready.",
    ]
if shared:
    b, a = shared["before"], shared["after"]
    lines += [
        "",
        f"The same {shared['entries']} entries shared by {shared['replicas']} replicas (`watch --leader-elect`, a Lease per",
        f"replica, 15 s Lease duration; BENCH_REPLICAS={shared['replicas']}): every entry taken in {b['ready_s']} s, shares",
        f"{', '.join(map(str, b['shares']))}, RSS {', '.join(f'{r} MiB' for r in b['rss_mib'])} (peaks {', '.join(f'{r} MiB' for r in b['peak_rss_mib'])}).",
        f"The management API server at rest, the {shared['replicas']} replicas together: {said(b['server_at_rest'])}.",
        f"One replica killed (no Lease given back): the others had every entry again after {a['taken_over_s']} s,",
        f"shares {', '.join(map(str, a['shares']))}, peaks {', '.join(f'{r} MiB' for r in a['peak_rss_mib'])}.",
    ]
section = "\n".join(lines) + "\n"
timed.replace_section(results_path, f"{section_name}: ", section)
print(json.dumps({"figures": figures, "growth": growth, "replicas": shared}))
