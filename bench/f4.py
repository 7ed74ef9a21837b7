"""Writes the F4 section of bench/RESULTS.md (called by scripts/bench.sh) from the measured rows
and the watcher's figures, replacing an earlier F4 section and keeping every other section.

    python3 bench/f4.py RESULTS.md ROWS.tsv WATCH.json RUNS
"""
import datetime
import json
import statistics
import sys

import rows as timed

path, rows_path, watch_path, runs = sys.argv[1:5]
rows = timed.read(rows_path, lambda case: case.startswith("F4"))
w = json.load(open(watch_path))


def median(case):
    return statistics.median(rows[case]["times"])


lines = [
    "## F4: 40,000 objects (issue 23)",
    "",
    f"Measured {datetime.date.today()} on the same 2-core machine and local control plane (`BENCH_ONLY=f4",
    f"scripts/bench.sh`, {runs} runs per case): F4 is 2,000 releases x 20 objects (ConfigMaps, Secrets,",
    "Services, ServiceAccounts, Deployments) in 100 namespaces with 2 revisions each; F4b is 5,000",
    "releases x 5 objects in 100 namespaces. `LIST-paged` counts the LISTs sent with `limit` (pages",
    "of `--chunk-size`, 500 by default).",
    "",
    *timed.table(rows),
]
ratio = median("F4 clean -A") / median("F4 floor (kubectl)")
ratio_b = median("F4b clean -A (5,000 x 5)") / median("F4b floor (kubectl)")
lines += [
    "",
    f"`check -A` against the kubectl floor: F4 {ratio:.2f}x, F4b {ratio_b:.2f}x (goal: under 2x).",
    "",
    "### helm-drift watch on F4",
    "",
    "| measure | value | goal |",
    "|---|---|---|",
    f"| releases watched | {w['releases']} | 2000 |",
    f"| time to ready (first full check) | {w['ready_s']:.3f} s | |",
    f"| API requests until ready | {' '.join(f'{k}={int(v)}' for k, v in sorted(w['requests_to_ready'].items()) if v)} | |",
    f"| idle: requests per minute besides the watches ({w['idle_seconds']} s) | "
    f"{' '.join(f'{k}={v}' for k, v in sorted(w['idle_requests_per_minute_besides_watches'].items()) if v) or 'none'} | none |",
    f"| idle: CPU | {w['idle_cpu_percent_of_a_core']} % of a core | |",
    f"| RSS (peak) | {w['rss_mib']} MiB ({w['peak_rss_mib']} MiB) | < 200 MiB |",
    f"| edit-to-metric over {w['edits']} edits: median, p99 (max) | {w['edit_to_metric_median_s']:.3f} s, "
    f"{w['edit_to_metric_p99_s']:.3f} s ({w['edit_to_metric_max_s']:.3f} s) | p99 < 1 s |",
]
if "storm_edits" in w:
    lines += [
        f"| storm: {w['storm_edits']} edits at {w['storm_edits_per_second']}/s, seen | {w['storm_seen']} | all |",
        f"| storm: edit-to-metric median, p99 (max) | {w['storm_median_s']} s, {w['storm_p99_s']} s "
        f"({w['storm_max_s']} s) | p99 < 1 s |",
        f"| RSS after the storm (peak) | {w['storm_rss_mib']} MiB ({w['storm_peak_rss_mib']} MiB) | < 200 MiB |",
    ]
section = "\n".join(lines) + "\n"

timed.replace_section(path, "F4: ", section)
