"""A fleet restored as Velero restores it (issue 35): every object a release of the fleet owns,
in each of its namespaces, is read with `kubectl get -o json`, stripped of what the server
writes (uid, resourceVersion, managedFields, status...), deleted and created again under the
field manager `velero-server`. Then `helm-drift check -A` must find no drift (owned elsewhere
only); called by scripts/bench.sh, which times that check.

    python3 bench/restore.py KUBECTL PREFIX NAMESPACES

Prints one JSON object: objects restored and seconds taken.
"""
import json
import subprocess
import sys
import time

kubectl, prefix, namespaces = sys.argv[1], sys.argv[2], int(sys.argv[3])
KINDS = "configmaps,secrets,services,serviceaccounts,deployments"
SERVER = ["uid", "resourceVersion", "managedFields", "creationTimestamp", "generation", "selfLink"]


def kube(*args, stdin=None):
    return subprocess.run([kubectl, *args], input=stdin, check=True, capture_output=True).stdout


start = time.time()
restored = 0
for i in range(namespaces):
    ns = f"{prefix}-ns{i}"
    listed = json.loads(kube("get", KINDS, "-n", ns, "-l", "app.kubernetes.io/managed-by=Helm", "-o", "json"))
    items = listed["items"]
    for o in items:
        for field in SERVER:
            o["metadata"].pop(field, None)
        o.pop("status", None)
    backup = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}).encode()
    kube("delete", KINDS, "-n", ns, "-l", "app.kubernetes.io/managed-by=Helm", "--wait=false")
    deadline = time.time() + 300
    while kube("get", KINDS, "-n", ns, "-l", "app.kubernetes.io/managed-by=Helm", "-o", "name").strip():
        assert time.time() < deadline, f"the objects of {ns} are not gone"
        time.sleep(0.5)
    kube("create", "-f", "-", "--field-manager=velero-server", stdin=backup)
    restored += len(items)
print(json.dumps({"objects": restored, "seconds": round(time.time() - start, 1)}))
