"""The timed cases of scripts/bench.sh's results file (lines `case<TAB>time<TAB>WALL RSS` and
`case<TAB>requests<TAB>COUNTS`), read by case, and their table in bench/RESULTS.md."""
import collections
import statistics


def read(path, keep):
    """The cases of the results file at `path` that `keep(case)` selects, in order."""
    rows = collections.OrderedDict()
    for line in open(path):
        case, kind, value = line.rstrip("\n").split("\t")
        if not keep(case):
            continue
        rows.setdefault(case, {"times": [], "rss": [], "requests": ""})
        if kind == "time":
            t, rss = value.split()
            rows[case]["times"].append(float(t))
            rows[case]["rss"].append(int(rss))
        else:
            rows[case]["requests"] = value
    return rows


def table(rows):
    """The Markdown table of the cases, a line each (header included)."""
    lines = [
        "| case | median wall | min - max | peak RSS (max) | API requests in one run |",
        "|---|---|---|---|---|",
    ]
    for case, r in rows.items():
        t = r["times"]
        lines.append(f"| {case} | {statistics.median(t):.3f} s | {min(t):.3f} - {max(t):.3f} s | "
                     f"{max(r['rss']) / 1024:.1f} MiB | {r['requests']} |")
    return lines


def replace_section(path, heading, section):
    """Writes `section` into RESULTS.md at `path` in place of its `## HEADING...` section, or, when
    there is none, before the record flood's section (else at the end); every other section kept."""
    text = open(path).read()
    marker = "\n## " + heading
    start = text.find(marker)
    if start >= 0:
        end = text.find("\n## ", start + len(marker))
        text = text[:start] + "\n" + section + (text[end:] if end >= 0 else "")
    else:
        flood = text.find("\n## Record flood")
        text = (text[:flood] + "\n" + section + text[flood:]) if flood >= 0 else text.rstrip("\n") + "\n\n" + section
    open(path, "w").write(text)
