#!/usr/bin/env python3
"""Seed 003's LMS single-loss metrics from an ns-2 LMS run (lms.tcl) and an rmcast run.

    lms_analyze.py ns2    EDGES TRACE STATS DROPS
    lms_analyze.py rmcast EDGES OUTDIR DROPS   (an `rmcast sim --records` run directory)
    lms_analyze.py rmlib  EDGES RESULT DROPS   (the JSON of `ns2-export run-lms`)
    lms_analyze.py drops EDGES SITE SEQ  (the drops of loss site src, rcv, mid or links)
    lms_analyze.py ns2-edges EDGES       (the edge list lms.tcl reads: ties nudged, see there)
    lms_analyze.py on-routers EDGES K    (the edge list with K tree routers made receivers)

DROPS is a drops file (`FROM TO SEQ [LINK [K]]` per line, as lms-compare.sh writes it):
the receivers below the link FROM -> TO on the source's routing tree (analyze.py's
`tree_parents`: shortest delay, or fewest hops with ROUTE=hops) lost SEQ; only their
recoveries count. Prints one JSON object (ns2) or one per run (rmcast).

Metrics (per run; "lossy" receivers are those below the lossy link):

* norm_latency_{mean,min,max}: (repair arrival - loss detection) / RTT over the lossy
  receivers that recovered, RTT = 2 x shortest-path propagation delay to the source + per
  hop the transmission of a 40-byte request and a 1064-byte repair (analyze.py `rtts`, as
  crates/repro/src/studies/lms/sim.rs).
  - ns-2: from the packet trace (`trace-all`): detection = the receiver host's first
    arrival (`r`) of an original data packet (flow id 1) with seqno > SEQ, which is when
    LmsReceiver::recv sees the gap (ns-2's LMS receivers detect gaps only on data); repair
    arrival = its first arrival of a packet with seqno SEQ and flow id 3 (a DMCAST).
  - rmcast: recoveries.csv, the receiver's LossDetected to its Delivered event.
* ns2_own_latency_mean / ns2_own_rtt: ns-2's own numbers from `print-stats` (per receiver
  avg normalized latency, and its RTT = 2 x the one-way delay of the 1024-byte SETUP).
* requests_per_drop: ns-2 NAKs (flow id 8) enqueued by a receiver host on its link (first
  NAKs and retries); rmcast runs.csv receiver_control_sent (LMS requests and repeats).
* repairs_per_drop: DMCASTs originated by a host (source or replier): ns-2 flow-id-3 packets
  of seqno SEQ enqueued by a member host; rmcast packets.csv repairs from the source and
  repairs to a node (a replier's to its turning point; the turning point's subcast of it is
  not counted again). Also source_repairs_per_drop (ns-2: the sender's).
* exposure: seed 003 Fig. 5.1, total duplicates / receivers / drops (ns-2's own
  `print-all-stats` third column is the same quantity; rmcast: receiver_duplicates).
  ns-2 also: exposure_unneeded (duplicates at receivers that did not lose the packet /
  receivers / drops, the rmcast study's `exposure`), exposed_receivers_frac ((receiver,
  drop) pairs where a receiver that did not lose the packet got a repair of it, / receivers
  / drops), exposed_links_frac
  (tree links, parent -> child, that carried a repair of SEQ with no lossy receiver below
  them, / tree links on the paths to receivers).
"""
import csv
import gzip
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import analyze  # noqa: E402  (read_edges, rtts, tree_parents, lost_pairs, edge_index)


def opener(path):
    """A trace, or its gzip (lms-compare.sh compresses traces once analyzed)."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def read_drops(path):
    out = []
    with open(path) as f:
        for line in f:
            w = line.split("#")[0].split()
            if w:
                out.append((int(w[0]), int(w[1]), int(w[2])))
    return out


def tree(edges):
    adj, src, recv = analyze.read_edges(edges)
    _, parent = analyze.tree_parents(adj, src)
    links = set()
    below = {}
    for r in recv:
        x = r
        while x != src:
            links.add((parent[x], x))
            below.setdefault((parent[x], x), set()).add(r)
            x = parent[x]
    return adj, src, recv, parent, links, below


def stats_block(text):
    """print-stats blocks (rcvK:, sender0:) -> {name: {field: value}}; last line: all-stats."""
    blocks, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^(rcv\d+|sender\d+):\s*$", line)
        if m:
            cur = blocks.setdefault(m.group(1), {})
            continue
        if cur is not None and ":" in line:
            k, v = line.split(":", 1)
            cur[k.strip()] = v.strip()
    nums = [l.split() for l in text.splitlines() if re.match(r"^\s*[\d.]+\s+\d+\s", l)]
    return blocks, (nums[-1] if nums else None)


def on_source_router(src, recv, parent):
    """Receivers whose host link hangs off the router the source's host link does."""
    srouter = [c for c, p in parent.items() if p == src]
    return sum(1 for r in recv if srouter and parent.get(r) == srouter[0])


def summary(lat, rtt, o):
    norm = [v / rtt[r] for (r, _), v in lat.items()]
    o.update({
        "recovered": len(norm),
        "norm_latency_mean": round(sum(norm) / len(norm), 4) if norm else None,
        "norm_latency_min": round(min(norm), 4) if norm else None,
        "norm_latency_max": round(max(norm), 4) if norm else None,
    })
    return o


def rmcast_repliers(adj, src, recv, parent):
    """rmcast's static replier at each router of the source's tree (crates/proto/src/lms
    `choose_replier` on crates/sim/src/registry.rs `lms_replier_candidates`): the child
    leading to the closest receiver (propagation delay from the router), ties to the lowest
    interface, i.e. the child whose link comes first in the edge list."""
    dist, _ = analyze.tree_parents(adj, src)
    best = {}
    for r in recv:
        x = r
        while x != src:
            p = parent[x]
            d = dist[r] - dist[p]
            best.setdefault(p, {})
            if x not in best[p] or d < best[p][x]:
                best[p][x] = d
            x = p
    return best


def ns2_repliers(trace, parent):
    """ns-2's replier child at each router: where the first REFRESH (LMS, flow id 7, going
    up) came from (LmsAgent adopts a REFRESH only if its cost is strictly lower)."""
    out = {}
    with opener(trace) as f:
        for line in f:
            w = line.split()
            if len(w) < 12 or w[0] != "r" or w[4] != "LMS" or w[7] != "7":
                continue
            a, b = int(w[2]), int(w[3])
            if parent.get(a) == b:
                out.setdefault(b, a)
    return out


def replier_mismatch(edges, trace):
    adj, src, recv, parent, links, below = tree(edges)
    order = analyze.edge_index(edges)
    best = rmcast_repliers(adj, src, recv, parent)
    ns = ns2_repliers(trace, parent)
    bad = 0
    for x, cands in best.items():
        # a router that is a receiver's own node is its own replier in both tools
        if x == src or x in recv:
            continue
        m = min(cands.values())
        tied = [c for c, d in cands.items() if abs(d - m) < 1e-12]
        rm = min(tied, key=lambda c: order[(x, c)])
        if ns.get(x) != rm:
            bad += 1
    return bad, len([x for x in best if x != src and x not in recv])


def run_inputs(edges, drops_file):
    """What every analysis of one run needs: the source's tree (`tree`), each receiver's RTT,
    the drops, the (receiver, seq) pairs they cost and their sequence numbers."""
    adj, src, recv, parent, links, below = tree(edges)
    rtt = analyze.rtts(adj, src, recv)
    drops = read_drops(drops_file)
    lost = analyze.lost_pairs(edges, drops_file)
    seqs = {q for _, _, q in drops}
    return adj, src, recv, parent, links, below, rtt, drops, lost, seqs


def ns2(edges, trace, stats, drops_file):
    adj, src, recv, parent, links, below, rtt, drops, lost, seqs = run_inputs(edges, drops_file)
    rs, members = set(recv), set(recv) | {src}
    detect, repair, arrivals = {}, {}, {}
    naks = 0
    # A member on a router node also forwards others' packets: a NAK counts where its source
    # address is the node's own (forwarded NAKs keep the requester's), a DMCAST (whose source
    # address is always the data source's) where the node enqueued it without having
    # received it, once per packet (uid) however many links it leaves on.
    got, made = set(), set()
    rep_links = set()
    with opener(trace) as f:
        for line in f:
            w = line.split()
            if len(w) < 12 or w[0] not in ("r", "+"):
                continue
            ev, t, a, b, typ, fid, seq = w[0], float(w[1]), int(w[2]), int(w[3]), w[4], w[7], int(w[10])
            if ev == "+":
                if a in rs and typ == "LMS" and fid == "8" and w[8].split(".")[0] == str(a):
                    naks += 1
                elif a in members and fid == "3" and seq in seqs and (a, w[11]) not in got:
                    made.add((a, w[11]))
                continue
            if fid == "3":
                got.add((b, w[11]))
            if typ != "cbr":
                continue
            if fid == "3" and seq in seqs:
                rep_links.add((a, b, seq))
                if b in rs:
                    arrivals[(b, seq)] = arrivals.get((b, seq), 0) + 1
                    repair.setdefault((b, seq), t)
            elif fid == "1" and b in rs:
                for q in seqs:
                    if seq > q and (b, q) in lost:
                        detect.setdefault((b, q), t)
    lat = {k: repair[k] - detect[k] for k in detect if k in repair and repair[k] >= detect[k]}
    nd = len(drops)
    dups = sum(n - (1 if k in lost else 0) for k, n in arrivals.items())
    unneeded = {k: n for k, n in arrivals.items() if k not in lost}
    exposed_links = 0
    for q in seqs:
        lossy = {r for (r, s) in lost if s == q}
        for (u, v) in links:
            if (u, v, q) in rep_links and not (below[(u, v)] & lossy):
                exposed_links += 1
    with open(stats) as f:
        blocks, allst = stats_block(f.read())
    own, own_rtt = [], []
    req_first = 0
    for i, r in enumerate(recv):
        b = blocks.get(f"rcv{i}", {})
        req_first += int(b.get("Requests sent", 0))
        if "Rtt" in b:
            own_rtt.append(float(b["Rtt"]))
        if "Normalized latency (min, max, avg)" in b and any(k[0] == r for k in lost):
            own.append(float(b["Normalized latency (min, max, avg)"].split(",")[2]))
    snd = blocks.get("sender0", {})
    o = {
        "receivers": len(recv),
        "lossy_receivers": len({r for r, _ in lost}),
        "unrecovered": sum(1 for k in lost if k not in repair),
        "requests_per_drop": round(naks / nd, 4),
        "first_requests_per_drop": round(req_first / nd, 4),
        "repairs_per_drop": round(len(made) / nd, 4),
        "source_repairs_per_drop": round(sum(1 for a, _ in made if a == src) / nd, 4),
        "sender_dmcasts_stat": int(snd.get("DMCASTs sent", -1)),
        "exposure": round(dups / len(recv) / nd, 5),
        "exposure_unneeded": round(sum(unneeded.values()) / len(recv) / nd, 5),
        "exposed_receivers_frac": round(len(unneeded) / len(recv) / nd, 5),
        "exposed_links_frac": round(exposed_links / len(links) / nd, 5),
        "ns2_own_latency_mean": round(sum(own) / len(own), 4) if own else None,
        "ns2_own_rtt_over_rtt": round(sum(x / rtt[r] for x, r in zip(own_rtt, recv)) / len(own_rtt), 4)
        if own_rtt else None,
        "ns2_print_all_stats": allst,
    }
    o["replier_mismatch"], o["replier_routers"] = replier_mismatch(edges, trace)
    o["receivers_on_source_router"] = on_source_router(src, recv, parent)
    return summary(lat, rtt, o)


def rmcast(edges, outdir, drops_file):
    adj, src, recv, parent, links, below, rtt, drops, lost, seqs = run_inputs(edges, drops_file)
    nd = len(drops)
    with open(f"{outdir}/runs.csv") as f:
        rows = list(csv.DictReader(f))
    detect, repair = {}, {}
    with open(f"{outdir}/recoveries.csv") as f:
        for x in csv.DictReader(f):
            k = (int(x["node"]), int(x["seq"]))
            if k[1] not in seqs or k not in lost:
                continue
            detect[(x["run"],) + k] = float(x["detected_s"])
            if x["delivered_s"]:
                repair[(x["run"],) + k] = float(x["delivered_s"])
    # Repairs a member originated, as ns-2 counts DMCASTs: the source's multicasts and the
    # repliers' unicasts to their turning points (dest `nodeN`), not the turning points'
    # subcasts of those (which `originated_repair` counts too).
    src_rep, member_rep = {}, {}
    with open(f"{outdir}/packets.csv") as f:
        for p in csv.DictReader(f):
            if p["class"] != "repair":
                continue
            if int(p["src"]) == src:
                src_rep[p["run"]] = src_rep.get(p["run"], 0) + 1
            if int(p["src"]) == src or p["dest"].startswith("node"):
                member_rep[p["run"]] = member_rep.get(p["run"], 0) + 1
    out = []
    for row in rows:
        run = row["run"]
        lat = {(r, s): repair[(ru, r, s)] - detect[(ru, r, s)]
               for (ru, r, s) in detect if ru == run and (ru, r, s) in repair}
        o = {
            "seed": int(row["seed"]),
            "receivers": len(recv),
            "lossy_receivers": len({r for r, _ in lost}),
            "drops": int(row["lost_single_loss"]),
            "unrecovered": sum(1 for k in lost if (run,) + k not in repair),
            "requests_per_drop": round(int(row["receiver_control_sent"]) / nd, 4),
            "repairs_per_drop": round(member_rep.get(run, 0) / nd, 4),
            "source_repairs_per_drop": round(src_rep.get(run, 0) / nd, 4),
            "exposure": round(int(row["receiver_duplicates"]) / len(recv) / nd, 5),
        }
        out.append(summary(lat, rtt, o))
    return out


def rmlib(edges, result, drops_file):
    """One run of `ns2-export run-lms` (rmcast's LMS through the study's own library calls,
    host nodes as in the study): the same metrics as `ns2`, duplicates per receiver from the
    agents' stats (so the exposure variants too; link exposure is not recorded)."""
    adj, src, recv, parent, links, below, rtt, drops, lost, seqs = run_inputs(edges, drops_file)
    nd = len(drops)
    with open(result) as f:
        res = json.load(f)
    lat = {}
    for node, seq, det, dlv in res["recoveries"]:
        if (node, seq) in lost and seq in seqs and dlv is not None and dlv >= det:
            lat[(node, seq)] = dlv - det
    lossy = {r for r, _ in lost}
    dups = sum(d for _, d, _, _ in res["receivers"])
    unneeded = {n: d for n, d, _, _ in res["receivers"] if n not in lossy and d}
    o = {
        "receivers": len(recv),
        "lossy_receivers": len(lossy),
        "drops": res["drops"],
        "unrecovered": sum(1 for k in lost if k not in lat),
        "requests_per_drop": round(sum(c for _, _, c, _ in res["receivers"]) / nd, 4),
        "repairs_per_drop": round((sum(x for _, _, _, x in res["receivers"]) + res["source_repairs"]) / nd, 4),
        "source_repairs_per_drop": round(res["source_repairs"] / nd, 4),
        "exposure": round(dups / len(recv) / nd, 5),
        # Per-receiver duplicate counts cannot be split by packet: only with one drop.
        "exposure_unneeded": round(sum(unneeded.values()) / len(recv) / nd, 5) if nd == 1 else None,
        "exposed_receivers_frac": round(len(unneeded) / len(recv) / nd, 5) if nd == 1 else None,
        "receivers_on_source_router": on_source_router(src, recv, parent),
    }
    return summary(lat, rtt, o)


def ns2_edges(edges):
    """The edge list for lms.tcl: each link of the source's tree from parent p to child c
    is made rank(c) ns longer, rank(c) = 0, 1, ... the order of p's tree children in the
    edge list (rmcast's interface order). ns-2's LMS routers take the replier link the first
    REFRESH came up; with equally close receivers (hosts sharing a router; every leaf of a
    binary tree) which one comes first is an accident of event order, where rmcast's
    `choose_replier` takes the lowest interface. The nudge makes the lowest interface's
    REFRESH the first (by 2 ns per rank) and changes no path's delay by more than a few ns."""
    adj, src, recv, parent, links, below = tree(edges)
    rank, seen = {}, {}
    lines = []
    with open(edges) as f:
        for line in f:
            body = line.split("#")[0].strip()
            if not body:
                lines.append(line.rstrip("\n"))
                continue
            w = body.split()
            a, b = int(w[0]), int(w[1])
            p, c = (a, b) if parent.get(b) == a else (b, a) if parent.get(a) == b else (None, None)
            if p is not None and (p, c) in links:
                k = seen.get(p, 0)
                seen[p] = k + 1
                w[2] = f"{float(w[2]) + k * 1e-6:.6f}"
            lines.append(" ".join(w))
    return lines


def site_drops(edges, site, seq):
    """The drops of one loss site, `FROM TO SEQ LINK K` per line (LINK: the edge's line
    index, rmcast's link id; K: rmcast's drop_nth index of that packet among the originals
    crossing the link):
    src   the source's own link, message SEQ;
    rcv   every receiver's own link (from its router), receiver i (header order) losing
          message SEQ + 10 i, one run;
    mid   one tree link halfway down the tree: among the links between two routers on the
          paths to receivers with at least two receivers below (any router-router link if
          none has), the one whose subtree holds the median number of receivers (lower
          median; ties by node ids), message SEQ;
    links every link of the source's tree in turn, upper links first, link i losing message
          SEQ + 10 i (analyze.py `tree_drops`);
    tt, ts, ss  the same over the tree links of one GT-ITM class (transit-transit,
          transit-stub, stub-stub: the edge list's `# class` comments), as the study's
          `LossAt::Class` (none on graphs without the class)."""
    adj, src, recv, parent, links, below = tree(edges)
    index = analyze.edge_index(edges)
    rs = set(recv)
    if site == "src":
        (u, v), = [l for l in links if l[0] == src]
        return [(u, v, seq, index[(u, v)], seq + 1)]
    if site == "rcv":
        mine = [(parent[r], r, seq + 10 * i) for i, r in enumerate(recv)]
        return [(u, v, q, index[(u, v)], drop_k(mine, parent, src, u, q)) for u, v, q in mine]
    if site == "mid":
        cand = sorted((len(below[l]), l) for l in links if l[0] != src and l[1] not in rs)
        cand = [c for c in cand if c[0] >= 2] or cand
        _, (u, v) = cand[(len(cand) - 1) // 2]
        return [(u, v, seq, index[(u, v)], seq + 1)]
    if site == "links":
        return analyze.tree_drops(edges, seq)
    classes = {"tt": "transit-transit", "ts": "transit-stub", "ss": "stub-stub"}
    if site in classes:
        cls = edge_classes(edges)
        dist, _ = analyze.tree_parents(adj, src)
        mine = sorted((dist[u], u, v) for (u, v) in links if cls.get((u, v)) == classes[site])
        mine = [(u, v, seq + 10 * i) for i, (_, u, v) in enumerate(mine)]
        return [(u, v, q, index[(u, v)], drop_k(mine, parent, src, u, q)) for u, v, q in mine]
    sys.exit(f"lms_analyze.py: no loss site {site!r} (src, rcv, mid, links, tt, ts, ss)")


def on_routers(edges, k):
    """The edge list with K routers of the source's tree made receivers too (members on
    routers, each above at least one receiver): the tree's routers other than the source's
    own router, ordered by (distance from the source, node), every len/K-th of them, so the
    chosen ones spread from near the source to near the leaves. Only `rmcast sim` on the
    edge list (every node a router) and ns-2 can place a receiver there."""
    adj, src, recv, parent, links, below = tree(edges)
    dist, _ = analyze.tree_parents(adj, src)
    first = [c for p, c in links if p == src]
    routers = sorted({p for p, _ in links if p != src and p not in first}, key=lambda x: (dist[x], x))
    step = max(1, len(routers) // k) if k else 1
    pick = [x for x in routers[::step] if x not in recv][:k]
    out = []
    with open(edges) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# receivers "):
                line = " ".join([line] + [str(x) for x in pick])
            out.append(line)
    return out


def drop_k(drops, parent, src, u, q):
    """rmcast's drop_nth K that drops original Q on a link leaving U, given every drop
    (FROM, TO, SEQ) of the run: Q + 1 less the originals before Q dropped on the links
    above U (they never cross it; ns-2's error model names Q itself)."""
    at = {(a, b): s for a, b, s in drops}
    above, x = 0, u
    while x != src:
        s = at.get((parent[x], x))
        above += s is not None and s < q
        x = parent[x]
    return q + 1 - above


def edge_classes(edges):
    """(a, b) and (b, a) -> the class in the line's trailing `# class` comment."""
    out = {}
    with open(edges) as f:
        for line in f:
            body, _, comment = line.partition("#")
            w = body.split()
            if len(w) >= 2 and comment.strip():
                a, b = int(w[0]), int(w[1])
                out[(a, b)] = out[(b, a)] = comment.split()[0]
    return out


def main():
    a = sys.argv[1:]
    if a[:1] == ["ns2"] and len(a) == 5:
        print(json.dumps(ns2(a[1], a[2], a[3], a[4])))
    elif a[:1] == ["rmcast"] and len(a) == 4:
        print(json.dumps(rmcast(a[1], a[2], a[3])))
    elif a[:1] == ["rmlib"] and len(a) == 4:
        print(json.dumps([rmlib(a[1], a[2], a[3])]))
    elif a[:1] == ["ns2-edges"] and len(a) == 2:
        print("\n".join(ns2_edges(a[1])))
    elif a[:1] == ["on-routers"] and len(a) == 3:
        print("\n".join(on_routers(a[1], int(a[2]))))
    elif a[:1] == ["drops"] and len(a) == 4:
        for row in site_drops(a[1], a[2], int(a[3])):
            print(*row)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
