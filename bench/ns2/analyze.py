#!/usr/bin/env python3
"""Extract seed 003's SRM single-loss metrics from an ns-2 SRM trace and an rmcast run.

    analyze.py ns2   EDGES TRACE DROP_SEQS
    analyze.py rmcast EDGES OUTDIR DROP_SEQS DROP_TIME_S
    analyze.py tree-drops EDGES FIRST_SEQ   (one drop per link of the source's tree)

DROP_SEQS: the 0-based sequence number of the dropped message, or several separated by
commas (one drop each, e.g. one per receiver's link), or @FILE, a drops file (`FROM TO SEQ`
per line, as srm.tcl reads): then only the receivers below the link FROM -> TO on the
source's shortest-delay tree lost SEQ, and a detection of SEQ elsewhere (a session message
that overtook the data announced it, and the original arrived after) is not a recovery. Prints one JSON object (ns2) or one per
run (rmcast): receivers, requests and repairs per drop, and the mean / max normalized
recovery latency over every (receiver, message) recovery.

Normalization (as crates/repro/src/studies/lms/sim.rs): latency / RTT, where RTT of a
receiver = 2 x its shortest-path propagation delay to the source + per hop the
transmission time of a 40-byte request and a 1064-byte repair.

ns-2: latency is measured per receiver from its own trace lines: `Q DETECT` to `Q REPAIR`
(the repair's arrival) for message <source:DROP_SEQ>; requests = `Q SENDNACK` lines, repairs
= `P SENDREP` lines for that message. The trace prints time with 4 decimals (0.1 ms).

rmcast: latency is measured per receiver from `rmcast sim --records`' recoveries.csv: the
receiver's `LossDetected` event for DROP_SEQ to its `Delivered` event for it (the same two
moments as ns-2's DETECT and REPAIR lines). Requests = runs.csv `receiver_control_sent` (SRM
requests; session messages are not counted there), repairs = `originated_repair`.

`latency_reconstructed_mean` (both tools) is the older estimate from repair *send* times
(packets.csv for rmcast, SENDREP lines for ns-2): detection when the next data packet (sent
100 ms after the dropped one) arrives, repair arrival = earliest repair send time +
shortest-path delay from its sender + per-hop transmission time, no queueing. Beside the
measurement it shows how much queueing (and detection by a session message) it missed.
"""
import csv
import heapq
import json
import os
import re
import sys


def read_edges(path):
    adj, src, recv = {}, None, []
    with open(path) as f:
        for line in f:
            m = re.match(r"# source (\d+)", line)
            if m:
                src = int(m.group(1))
                continue
            m = re.match(r"# receivers (.*)$", line)
            if m:
                recv = [int(x) for x in m.group(1).split()]
                continue
            line = line.split("#")[0].strip()
            if not line:
                continue
            a, b, d, bw = line.split()
            a, b, d, bw = int(a), int(b), float(d) / 1e3, float(bw)
            adj.setdefault(a, []).append((b, d, bw))
            adj.setdefault(b, []).append((a, d, bw))
    if src is None or not recv:
        sys.exit(f"analyze.py: {path}: no '# source' / '# receivers' header")
    return adj, src, recv


def paths(adj, s, length):
    """The shortest-delay tree from `s` ([`tree_parents`]); returns {node: (prop_delay, sum
    of tx time of `length` bytes per hop, [per-hop bandwidths])}."""
    dist, parent = tree_parents(adj, s)
    out = {}
    for v in sorted(dist, key=dist.get):  # parents before their children
        if v == s:
            out[v] = (0.0, 0.0, [])
            continue
        u = parent[v]
        # the edge u-v the tree took (the one whose delay makes up v's distance)
        bw = min(((abs(dist[u] + d - dist[v]), b) for w, d, b in adj[u] if w == v))[1]
        hops = out[u][2] + [bw]
        out[v] = (dist[v], sum(length * 8 / b for b in hops), hops)
    return out


def rtts(adj, src, recv):
    p = paths(adj, src, 0)
    out = {}
    for r in recv:
        prop, _, hops = p[r]
        out[r] = 2 * prop + sum(40 * 8 / b + 1064 * 8 / b for b in hops)
    return out


def arrival(adj, sender, t, length, cache):
    if (sender, length) not in cache:
        cache[(sender, length)] = paths(adj, sender, length)
    p = cache[(sender, length)]
    return {n: t + v[0] + v[1] for n, v in p.items()}


def summary(lat, rtt, requests, repairs, recv, drops, extra=None):
    """`lat` maps (receiver, seq) to a recovery latency in seconds."""
    norm = [v / rtt[r] for (r, _), v in lat.items()]
    o = {
        "receivers": len(recv),
        "lossy_receivers": len(lat),
        "requests_per_drop": round(requests / drops, 4),
        "repairs_per_drop": round(repairs / drops, 4),
        "norm_latency_mean": round(sum(norm) / len(norm), 4) if norm else None,
        "norm_latency_max": round(max(norm), 4) if norm else None,
        "norm_latency_min": round(min(norm), 4) if norm else None,
    }
    if extra:
        o.update(extra)
    return o


def ns2(edges, trace, seqs, lost=None):
    adj, src, recv = read_edges(edges)
    rtt = rtts(adj, src, recv)
    pat = re.compile(r"^\s*([\d.]+) n (\d+) m <(\d+):(\d+)> r (\d+) (.*)$")
    detect, repair, sendrep, original = {}, {}, [], set()
    requests = repairs = 0
    with open(trace) as f:
        for line in f:
            m = pat.match(line)
            if not m or int(m.group(3)) != src or int(m.group(4)) not in seqs:
                continue
            t, node, seq, what = float(m.group(1)), int(m.group(2)), int(m.group(4)), m.group(6)
            if what.startswith("Q DETECT"):
                detect.setdefault((node, seq), t)
            elif what.startswith("Q REPAIR"):
                repair.setdefault((node, seq), t)
            elif what.startswith("Q DATA"):
                # The original arrived after all (a detection by a session message that
                # overtook it): not a recovery.
                original.add((node, seq))
            elif what.startswith("Q SENDNACK"):
                requests += 1
            elif what.startswith("P SENDREP"):
                repairs += 1
                sendrep.append((t, node))
    rs = set(recv)
    if lost is not None:
        detect = {k: v for k, v in detect.items() if k in lost}
    lat = {k: repair[k] - detect[k] for k in detect if k[0] in rs and k in repair}
    # Reconstruction from SENDREP times (same method as for rmcast; one drop only).
    rl = []
    if len(seqs) == 1:
        cache, rec = {}, {}
        for t, node in sendrep:
            for n, ta in arrival(adj, node, t, 1069, cache).items():
                rec[n] = min(rec.get(n, 1e18), ta)
        rl = [(rec[r] - detect[(r, s)]) / rtt[r] for (r, s) in lat if r in rec]
    return summary(lat, rtt, requests, repairs, recv, len(seqs), {
        "unrecovered": sum(1 for k in detect
                           if k[0] in rs and k not in repair and k not in original),
        "latency_reconstructed_mean": round(sum(rl) / len(rl), 4) if rl else None,
    })


def rmcast(edges, outdir, seqs, drop_time, lost=None):
    """One summary per run of the sweep (runs.csv rows), in run order."""
    adj, src, recv = read_edges(edges)
    rtt = rtts(adj, src, recv)
    with open(f"{outdir}/runs.csv") as f:
        rows = list(csv.DictReader(f))
    detect, repair = {}, {}
    with open(f"{outdir}/recoveries.csv") as f:
        for x in csv.DictReader(f):
            if int(x["seq"]) not in seqs:
                continue
            if lost is not None and (int(x["node"]), int(x["seq"])) not in lost:
                continue
            key = (x["run"], int(x["node"]), int(x["seq"]))
            detect[key] = float(x["detected_s"])
            if x["delivered_s"]:
                repair[key] = float(x["delivered_s"])
    reps = {}
    with open(f"{outdir}/packets.csv") as f:
        for p in csv.DictReader(f):
            if p["class"] == "repair":
                reps.setdefault(p["run"], []).append(
                    (float(p["time_s"]), int(p["src"]), int(p["len"])))
    cache = {}
    # The reconstruction: detection by the next data packet (1052 bytes on the wire).
    nxt = arrival(adj, src, drop_time + 0.1, 1052, cache)
    out = []
    for row in rows:
        run = row["run"]
        rs = set(recv)
        lat = {(r, s): repair[(ru, r, s)] - detect[(ru, r, s)]
               for (ru, r, s) in detect if ru == run and r in rs and (ru, r, s) in repair}
        rl = []
        if len(seqs) == 1:
            rec = {}
            for t, node, ln in reps.get(run, []):
                for n, ta in arrival(adj, node, t, ln, cache).items():
                    rec[n] = min(rec.get(n, 1e18), ta)
            rl = [(rec[r] - nxt[r]) / rtt[r] for r in recv if r in rec and rec[r] >= nxt[r]]
        out.append(summary(lat, rtt, int(row["receiver_control_sent"]),
                           int(row["originated_repair"]), recv, len(seqs), {
                               "seed": int(row["seed"]),
                               "drops": int(row["lost_single_loss"]),
                               "unrecovered": sum(1 for (ru, r, s) in detect
                                                  if ru == run and r in rs
                                                  and (ru, r, s) not in repair),
                               "latency_reconstructed_mean":
                                   round(sum(rl) / len(rl), 4) if rl else None,
                           }))
    return out


def tree_parents(adj, src):
    """Distances and parents on the source's routing tree (Dijkstra as `paths`, the first
    label wins on ties): shortest-delay, or with ROUTE=hops in the environment fewest hops
    and then least delay (rmcast's `routing = "hops"`)."""
    hops_first = os.environ.get("ROUTE", "delay") == "hops"
    key = (lambda h, d: (h, d)) if hops_first else (lambda h, d: (d,))
    dist, hops, parent, done = {src: 0.0}, {src: 0}, {}, set()
    pq = [(key(0, 0.0), src)]
    while pq:
        _, u = heapq.heappop(pq)
        if u in done:
            continue
        done.add(u)
        d, h = dist[u], hops[u]
        for v, dl, _ in adj.get(u, []):
            if v in done:
                continue
            new = key(h + 1, d + dl)
            if v not in dist or new < key(hops[v], dist[v] - 1e-15):
                dist[v], hops[v], parent[v] = d + dl, h + 1, u
                heapq.heappush(pq, (new, v))
    return dist, parent


def lost_pairs(edges, drops_file):
    """(receiver, seq) for every receiver below a drop's link on the source's tree."""
    adj, src, recv = read_edges(edges)
    _, parent = tree_parents(adj, src)
    below = {}
    for r in recv:
        x = r
        while x != src and x in parent:
            below.setdefault((parent[x], x), []).append(r)
            x = parent[x]
    out = set()
    with open(drops_file) as f:
        for line in f:
            line = line.split("#")[0].split()
            if not line:
                continue
            a, b, q = int(line[0]), int(line[1]), int(line[2])
            out.update((r, q) for r in below.get((a, b), []))
    return out


def edge_index(edges):
    """Each edge of the list, both directions, to its line index among the edge lines
    (rmcast's link id)."""
    index, k = {}, 0
    with open(edges) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if not line:
                continue
            a, b = (int(x) for x in line.split()[:2])
            index.setdefault((a, b), k)
            index.setdefault((b, a), k)
            k += 1
    return index


def tree_drops(edges, first_seq):
    """The source's shortest-delay tree (as `paths`), one drop per tree link: `FROM TO SEQ
    LINK K` lines, FROM the link's upper end, LINK its edge index, SEQ first_seq + 10 i in
    order of the links' depth (then node ids), and K the 1-based index of that packet among
    the original data packets that cross the link: every tree link above it dropped one
    earlier packet, which never reached it (rmcast's `drop_nth` counts crossings; ns-2's
    SRMErrorModel matches the sequence number)."""
    adj, src, recv = read_edges(edges)
    index = edge_index(edges)
    dist, parent = tree_parents(adj, src)
    links = set()
    for r in recv:
        x = r
        while x != src:
            if x not in parent:
                sys.exit(f"analyze.py: receiver {r} is unreachable from the source")
            links.add((dist[parent[x]], parent[x], x))
            x = parent[x]
    def above(u):
        n = 0
        while u != src:
            u, n = parent[u], n + 1
        return n
    out = []
    for i, (_, u, v) in enumerate(sorted(links)):
        q = first_seq + 10 * i
        out.append((u, v, q, index[(u, v)], q + 1 - above(u)))
    return out


def main():
    if sys.argv[1:2] == ["tree-drops"] and len(sys.argv) == 4:
        for row in tree_drops(sys.argv[2], int(sys.argv[3])):
            print(*row)
        return
    lost = None
    if len(sys.argv) >= 5 and sys.argv[4].startswith("@"):
        try:
            lost = lost_pairs(sys.argv[2], sys.argv[4][1:])
            with open(sys.argv[4][1:]) as f:
                seqs = {int(l.split()[2]) for l in f if l.split("#")[0].strip()}
        except (OSError, ValueError, IndexError) as e:
            sys.exit(f"analyze.py: drops file {sys.argv[4][1:]}: {e}")
    elif len(sys.argv) >= 5:
        try:
            seqs = {int(x) for x in sys.argv[4].split(",")}
        except ValueError:
            sys.exit(f"analyze.py: DROP_SEQS must be integers separated by commas, not {sys.argv[4]!r}")
    if sys.argv[1:2] == ["ns2"] and len(sys.argv) == 5:
        out = ns2(sys.argv[2], sys.argv[3], seqs, lost)
    elif sys.argv[1:2] == ["rmcast"] and len(sys.argv) == 6:
        out = rmcast(sys.argv[2], sys.argv[3], seqs, float(sys.argv[5]), lost)
    else:
        sys.exit(__doc__)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
