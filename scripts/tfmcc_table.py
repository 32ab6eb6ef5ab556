#!/usr/bin/env python3
"""Tables of the pgm-tfmcc scenarios (docs/tfmcc.md) from an `rmcast sim` output directory
(runs.csv and series.csv).

Per run: tfmcc, seed, completed, the slowest receiver's messages, when the last receiver
delivered its last message, megabytes the pgm source sent by the last sample, its highest rate
over one sampling interval (Mbit/s, against the bottleneck's), bottleneck queue drops, repairs,
control packets. Then, if series.csv has a [cross] flow,
per run the mean rate through the bottleneck of each flow (Mbit/s, the slowest receiver's and
the cross sink's received bytes over the interval) before, while and after the cross flow
sends.

    python3 scripts/tfmcc_table.py out/pgm-tfmcc
"""
import csv
import os
import sys
from collections import defaultdict


def rate(samples, t0, t1, key):
    """Mean Mbit/s of cumulative byte column `key` between the samples at t0 and t1."""
    at = {round(float(s["time_s"]), 6): s for s in samples}
    a, b = at.get(round(t0, 6)), at.get(round(t1, 6))
    if a is None or b is None or not a[key] or not b[key]:
        return float("nan")
    return (int(b[key]) - int(a[key])) * 8 / (t1 - t0) / 1e6


def main(out):
    with open(os.path.join(out, "runs.csv"), newline="") as f:
        runs = list(csv.DictReader(f))
    series = defaultdict(list)
    path = os.path.join(out, "series.csv")
    if os.path.exists(path):
        with open(path, newline="") as f:
            for s in csv.DictReader(f):
                series[s["run"]].append(s)
    print("tfmcc,seed,completed,delivered_min,last_delivery_s,source_sent_mb,peak_send_mbps,"
          "queue_drops,repairs,control_packets")
    for r in runs:
        s = series.get(r["run"], [])
        sent = [(float(x["time_s"]), int(x["source_sent_bytes"])) for x in s]
        # The source's highest rate over one sampling interval (from time zero for the first).
        peak = max(((b - a) * 8 / (t1 - t0) / 1e6
                    for (t0, a), (t1, b) in zip([(0.0, 0)] + sent, sent)), default=float("nan"))
        total = sent[-1][1] / 1e6 if sent else float("nan")
        print(f"{r.get('protocol.tfmcc')},{r['seed']},{r['completed']},{r['delivered_min']},"
              f"{float(r['last_delivery_s'] or 'nan'):.2f},{total:.2f},{peak:.1f},"
              f"{r['lost_queue_overflow']},{r['originated_repair']},{r['originated_control']}")
    cross = {k: v for k, v in series.items() if any(x["cross_sent_bytes"] for x in v)}
    if not cross:
        return
    print()
    print("tfmcc,seed,window,from_s,to_s,pgm_mbps,cross_mbps,sum_mbps")
    for r in runs:
        s = cross.get(r["run"])
        if not s:
            continue
        # The cross flow's first and last sending instants from its byte counts.
        sending = [float(x["time_s"]) for x in s if x["cross_sent_bytes"] and int(x["cross_sent_bytes"]) > 0]
        start = min(sending)
        stop = min(float(x["time_s"]) for x in s
                   if x["cross_sent_bytes"] == s[-1]["cross_sent_bytes"])
        end = float(r["last_delivery_s"] or 0)
        # Whole seconds inside each phase, a second of margin after each change.
        windows = [("alone, before", start - 4, start - 1), ("shared", start + 1, stop - 1),
                   ("alone, after", stop + 2, end - 1)]
        for name, t0, t1 in windows:
            t0, t1 = round(t0), round(t1)
            if t1 <= t0:
                continue
            p = rate(s, t0, t1, "received_bytes_min")
            c = rate(s, t0, t1, "cross_received_bytes")
            print(f"{r.get('protocol.tfmcc')},{r['seed']},{name},{t0},{t1},{p:.2f},{c:.2f},{p + c:.2f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1])
