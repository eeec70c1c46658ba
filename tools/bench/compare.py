#!/usr/bin/python3
"""Compare the medians of two `make bench` runs, case by case.

    compare.py DIR1 DIR2 [TOLERANCE]

Prints every case measured in both with its median packet rate in each and
the difference, and ends with how many differ by more than TOLERANCE
(default 0.10). Exit status 1 when any does: a way to check that the
machine was quiet enough for the figures to mean something.
"""
import json
import os
import statistics
import sys


def medians(d):
    runs = {}
    for line in open(os.path.join(d, "results.jsonl")):
        r = json.loads(line)
        if "pps" in r:
            runs.setdefault((r.get("guest", "host"), r["scenario"], r["case"]), []).append(r["pps"])
    return {k: statistics.median(v) for k, v in runs.items()}


def main():
    a, b = medians(sys.argv[1]), medians(sys.argv[2])
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 0.10
    off = 0
    for k in sorted(set(a) & set(b)):
        if not a[k] and not b[k]:
            continue
        diff = abs(a[k] - b[k]) / max(a[k], b[k])
        mark = "  <-- over %d%%" % (tol * 100) if diff > tol else ""
        off += diff > tol
        print("%-5s %s %-60s %12.0f %12.0f %6.1f%%%s" % (k[0], k[1], k[2][:60], a[k], b[k],
                                                     100 * diff, mark))
    print("%d of %d cases differ by more than %d%%" % (off, len(set(a) & set(b)), tol * 100))
    return 1 if off else 0


if __name__ == "__main__":
    sys.exit(main())
