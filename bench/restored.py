"""Writes the restored-fleet section of bench/RESULTS.md (issue 35; called by scripts/bench.sh)
from the timed cases, what bench/restore.py restored and the JSON report of the restored check,
replacing an earlier such section and keeping every other section.

    python3 bench/restored.py RESULTS.md ROWS.tsv RESTORE.json REPORT.json RUNS
"""
import collections
import datetime
import json
import sys

import rows as timed

path, tsv, runs = sys.argv[1], sys.argv[2], sys.argv[5]
restore, report = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
rows = timed.read(tsv, lambda case: case.startswith("R "))
objects = [o for r in report["releases"] for o in r["objects"]]
verdicts = collections.Counter(o["verdict"] for o in objects)
added = sum(len(o["addedOutsideHelm"]) for o in objects)
server = sum(len(o["serverValues"]) for o in objects)
text = open(path).read().split("\n## Restored fleet")[0].rstrip("\n")
text += f"""

## Restored fleet (issue 35)

Measured {datetime.date.today()} (`BENCH_ONLY=restore scripts/bench.sh {runs}`): 500 releases x 20 objects in 50
namespaces, then every one of their {restore['objects']} objects read with `kubectl get -o json`, stripped of
what the server writes, deleted and created again as `velero-server` (by `bench/restore.py`, in
{restore['seconds']} s). Then `helm drift check -A` through helm, the release build.

"""
text += "\n".join(timed.table(rows)) + "\n"
text += f"""
After the restore: verdicts {', '.join(f'{k} {v}' for k, v in sorted(verdicts.items()))}; fields added outside Helm
{added} (before issue 35, every restored Deployment and Service listed the server's defaults as
added: exit 2); fields holding the server's value for the record, owned by velero-server, {server}.
"""
open(path, "w").write(text)
