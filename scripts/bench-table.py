#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The benchmark table of docs/benchmarks.md from nvmeof-bench --json files.

    scripts/bench-table.py AFTER.json [BEFORE.json]
    scripts/bench-table.py merge OUT.json IN.json...   (one file, the cells in order)

One row per workload: IOPS native and SCSI with SCSI's difference, target CPU per I/O,
and each path's IOPS as a fraction of nvmeof-tcp-ceiling measured in the same run. With
BEFORE.json (an earlier build measured the same way, in the same session), each of those
figures gets a "before" column too.
"""
import json
import math
import statistics
import sys


def num(v, digits=1):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if abs(v) >= 10000:
        return "%.1fk" % (v / 1000)
    if abs(v) >= 1000:
        return "%.0f" % v
    return ("%%.%df" % digits) % v


def cells(path):
    with open(path) as f:
        d = json.load(f)
    out = {}
    for c in d["cells"]:
        row = {}
        for p in ("native", "scsi"):
            m = c[p]
            row[p] = m["median"] if m.get("ran") else None
        ce = c.get("ceiling") or {}
        row["ceil_iops"] = ce.get("iops_median") if ce.get("ran") else None
        cpu = ce.get("server_cpu_us_per_req") or []
        row["ceil_cpu"] = statistics.median(cpu) if cpu else None
        out[c["label"]] = row
    return d, out


def frac(row, p):
    m = row[p]
    if not m or not row["ceil_iops"]:
        return None
    return m["iops"] / row["ceil_iops"]


def diff(row):
    n, s = row["native"], row["scsi"]
    if not n or not s or not n["iops"]:
        return None
    return (s["iops"] / n["iops"] - 1) * 100


def merge(out, inputs):
    def key(p):  # NAME.N.json: by N
        parts = p.rsplit(".", 2)
        return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else 0
    merged = None
    for p in sorted(inputs, key=key):
        with open(p) as f:
            d = json.load(f)
        if merged is None:
            merged = d
        else:
            merged["cells"].extend(d["cells"])
    with open(out, "w") as f:
        json.dump(merged, f, indent=1)
        f.write("\n")
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "merge":
        return merge(argv[2], argv[3:])
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    meta, after = cells(argv[1])
    before = cells(argv[2])[1] if len(argv) == 3 else None
    cols = ["workload", "IOPS native", "IOPS SCSI", "SCSI diff", "avg lat native (us)",
            "target CPU/IO native (us)", "target CPU/IO SCSI (us)",
            "ceiling server CPU/req (us)", "IOPS / ceiling, native / SCSI"]
    if before:
        cols = ["workload", "IOPS native before", "after", "IOPS SCSI before", "after",
                "SCSI diff after", "avg lat native (us) before", "after",
                "target CPU/IO native (us) before", "after", "target CPU/IO SCSI after",
                "ceiling server CPU/req (us)", "IOPS / ceiling native before", "after",
                "IOPS / ceiling SCSI before", "after"]
    print("| " + " | ".join(cols) + " |")
    print("|---" + "|---:" * (len(cols) - 1) + "|")
    for label, a in after.items():
        n, s = a["native"] or {}, a["scsi"] or {}
        d = diff(a)
        ds = "-" if d is None else "%+.1f%%" % d
        fa_n, fa_s = frac(a, "native"), frac(a, "scsi")
        if before and label in before:
            b = before[label]
            bn, bs = b["native"] or {}, b["scsi"] or {}
            fb_n, fb_s = frac(b, "native"), frac(b, "scsi")
            vals = [label, num(bn.get("iops")), num(n.get("iops")), num(bs.get("iops")),
                    num(s.get("iops")), ds, num(bn.get("lat_avg_us")), num(n.get("lat_avg_us")),
                    num(bn.get("target_cpu_us_per_io"), 2), num(n.get("target_cpu_us_per_io"), 2),
                    num(s.get("target_cpu_us_per_io"), 2), num(a["ceil_cpu"], 2),
                    num(fb_n, 2) + "x" if fb_n else "-", num(fa_n, 2) + "x" if fa_n else "-",
                    num(fb_s, 2) + "x" if fb_s else "-", num(fa_s, 2) + "x" if fa_s else "-"]
        else:
            vals = [label, num(n.get("iops")), num(s.get("iops")), ds, num(n.get("lat_avg_us")),
                    num(n.get("target_cpu_us_per_io"), 2), num(s.get("target_cpu_us_per_io"), 2),
                    num(a["ceil_cpu"], 2),
                    "%s / %s" % (num(fa_n, 2) + "x" if fa_n else "-",
                                 num(fa_s, 2) + "x" if fa_s else "-")]
        print("| " + " | ".join(vals) + " |")
    o = meta.get("options", {})
    print()
    print("%s; medians of %s runs of %.1f s after %.1f s of warm-up, %s job(s), started %s"
          % (meta.get("host", "?"), o.get("repeat"), o.get("time_s", 0), o.get("warmup_s", 0),
             o.get("jobs"), meta.get("started", "?")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
