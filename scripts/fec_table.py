#!/usr/bin/env python3
"""Repair packets per source packet from an `rmcast sim` runs.csv of the pgm-fec scenarios
(docs/fec.md): per receiver count and fec_k, the runs, sum(originated_repair) /
sum(originated_data), the per-run standard deviation, and whether every run completed.

    python3 scripts/fec_table.py out/pgm-fec/runs.csv [more runs.csv ...]
"""
import csv
import statistics
import sys
from collections import defaultdict


def main(paths):
    groups = defaultdict(list)
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                groups[(int(row["receivers"]), int(row.get("protocol.fec_k") or 0))].append(row)
    print("receivers,fec_k,runs,source_packets,repairs,repairs_per_packet,sd_per_run,all_completed")
    for (receivers, k), rows in sorted(groups.items()):
        data = sum(int(r["originated_data"]) for r in rows)
        repairs = sum(int(r["originated_repair"]) for r in rows)
        per = [int(r["originated_repair"]) / int(r["originated_data"]) for r in rows]
        sd = statistics.stdev(per) if len(per) > 1 else 0.0
        done = all(r["completed"] == "true" for r in rows)
        print(f"{receivers},{k},{len(rows)},{data},{repairs},{repairs / data:.4f},{sd:.4f},{done}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
