#!/usr/bin/env bash
# bench/ns2/compare.sh: seed 003's SRM loss experiments in ns-2 and in rmcast, side by
# side, on the same machine in the same invocation. Prints one JSON object on stdout
# (progress on stderr). See bench/ns2/README.md.
#
#   bash bench/ns2/compare.sh                     # 20, 50, 100 receivers, loss at the source
#   RECEIVERS="20" SEEDS=1 bash bench/ns2/compare.sh
#   LOSS=receivers AGENT=SRM/Adaptive RECEIVERS=20 SEEDS=10 bash bench/ns2/compare.sh
#
# Environment: RECEIVERS (default "20 50 100"), SEEDS (runs per tool and size, default 2),
# REF_SEEDS (extra rmcast runs for the rmcast reference distribution, default 100),
# SUMMARY_ONLY (1: run nothing, print the summary of the runs already in OUT),
# NS2_TIMEOUT (seconds per ns-2 run, default 600; a size whose ns-2 run times out ends the
# ns-2 side), GRAPH_SEED (rmcast flat_random seed, default 3), OUT (work dir), MCAST (ns-2's
# multicast routing: CtrMcast, centralized source trees, the default; DM, dense mode, whose
# flooding and pruning cost ns-2 most of its wall time), LOSS (source: one original data
# packet, the 31st, dropped on the source's link, the default; receivers: one drop on each
# receiver's own link in turn, receiver i losing message 31 + 10 i, 1 s apart, all in one
# run; links: the same with one drop on each link of the source's shortest-delay tree, upper
# links first), AGENT (SRM, fixed timers, the default; SRM/Adaptive, ns-2's adaptive timers and
# rmcast's `adaptive = true`), ROUTE (the routing metric of both tools: delay, each link's
# cost in ns-2 its delay in ms and rmcast's `routing = "delay"`, the default; hops, ns-2's own
# default of cost 1 per link and rmcast's `routing = "hops"`, fewest hops then least delay).
set -euo pipefail
# Wall time is read from bash's EPOCHREALTIME, which costs no fork: `$(date +%s.%N)` took
# ~1.7 ms a call here and put ~1.5 ms of it inside each timed interval, a fifth of a
# 20-receiver rmcast run.
if [ "${BASH_VERSINFO[0]}" -lt 5 ]; then echo "compare.sh: needs bash 5 or later (EPOCHREALTIME)" >&2; exit 2; fi
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RECEIVERS=${RECEIVERS:-"20 50 100"}
SEEDS=${SEEDS:-2}
REF_SEEDS=${REF_SEEDS:-100}
NS2_TIMEOUT=${NS2_TIMEOUT:-600}
GRAPH_SEED=${GRAPH_SEED:-3}
MCAST=${MCAST:-CtrMcast}
LOSS=${LOSS:-source}
AGENT=${AGENT:-SRM}
ROUTE=${ROUTE:-delay}
case "$ROUTE" in delay|hops) ;; *) echo "compare.sh: ROUTE must be delay or hops, not $ROUTE" >&2; exit 2 ;; esac
case "$LOSS" in source|receivers|links) ;; *) echo "compare.sh: LOSS must be source, receivers or links, not $LOSS" >&2; exit 2 ;; esac
case "$AGENT" in SRM) ADAPTIVE=false ;; SRM/Adaptive) ADAPTIVE=true ;; *) echo "compare.sh: AGENT must be SRM or SRM/Adaptive, not $AGENT" >&2; exit 2 ;; esac
# analyze.py builds the routing trees (for RTTs and for who is below a lossy link) by ROUTE.
export ROUTE
OUT=${OUT:-$(mktemp -d /tmp/rmcast-ns2.XXXXXX)}
DROP_SEQ=30        # 0-based ns-2 seqno of the (first) dropped message: the 31st, sent at t = 3.0 s
                   # (rmcast's drop_nth counts from 1: k = seqno + 1)
log() { echo "compare.sh: $*" >&2; }

if ! command -v ns >/dev/null 2>&1; then
    log "installing Debian's ns2"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ns2 >&2
fi
NS=$(command -v ns)
NS_VERSION=$(dpkg-query -W -f='${Version}' ns2 2>/dev/null || echo unknown)

log "building rmcast and the graph exporter (cargo build --release)"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
(cd "$ROOT" && CARGO_TARGET_DIR="$TARGET" cargo build --release -q -p rmcast >&2)
# The exporter is its own workspace; sharing the target dir reuses rmcast-sim's build.
(cd "$HERE/export" && CARGO_TARGET_DIR="$TARGET" cargo build --release -q >&2)
RMCAST=$TARGET/release/rmcast
EXPORT=$TARGET/release/ns2-export
mkdir -p "$OUT"
log "work dir $OUT"

# drops R: the drops for graph $OUT/g$R.txt, one line `FROM TO SEQ LINK [K]` each (LINK: the
# edge's line index, rmcast's link id; K: rmcast's drop_nth index of the packet among the
# originals crossing the link, SEQ + 1 unless drops above it leave fewer), into
# $OUT/drops$R.txt.
drops() {
    local r=$1 g="$OUT/g$r.txt"
    if [ "$LOSS" = links ]; then
        python3 "$HERE/analyze.py" tree-drops "$g" "$DROP_SEQ"
    elif [ "$LOSS" = source ]; then
        awk -v q="$DROP_SEQ" '/^# source /{s=$3} /^# source_link /{l=$3}
            !/^#/ {if (k == l) print s, (($1 == s) ? $2 : $1), q, l; k++}' "$g"
    else
        # Receiver i's own link (the edge with it as an end), entered from the other end.
        awk -v q="$DROP_SEQ" '/^# receivers /{for (i = 3; i <= NF; i++) idx[$i] = i - 3}
            !/^#/ {if ($2 in idx) print $1, $2, q + 10 * idx[$2], k;
                   else if ($1 in idx) print $2, $1, q + 10 * idx[$1], k; k++}' "$g" | sort -n -k3
    fi > "$OUT/drops$r.txt"
    [ -s "$OUT/drops$r.txt" ] || { log "no drops found in $g"; exit 1; }
}

# scenario R SEEDLIST: the rmcast TOML for graph $OUT/g$R.txt and its drops
scenario() {
    local r=$1 seeds=$2 g="$OUT/g$r.txt"
    local src rcv
    src=$(awk '/^# source /{print $3}' "$g")
    rcv=$(awk '/^# receivers /{$1=$2=""; print}' "$g" | xargs | tr ' ' ',')
    cat <<TOML
# Generated by bench/ns2/compare.sh: seed 003's SRM experiment on rmcast's flat random
# graph (n=100, p=0.1, seed $GRAPH_SEED) with $r receivers, exported as an edge list.
name = "seed 003 SRM, loss at the $LOSS, $AGENT, $r receivers (bench/ns2)"
seed = $seeds

[topology]
kind = "edge_list"
file = "g$r.txt"
routing = "$ROUTE"
source = $src
receiver_ids = [$rcv]

[protocol]
name = "srm"
c1 = 2.0
c2 = 2.0
d1 = 1.0
d2 = 1.0
adaptive = $ADAPTIVE

[traffic]
messages = $MESSAGES
size = 1024
interval_ms = 100
TOML
    while read -r from _ seq link k; do
        cat <<TOML

[[loss]]
model = "drop_nth"
k = ${k:-$((seq + 1))}
filter = "original"
at = "link"
links = [$link]
from = $from
cause = "single_loss"
TOML
    done < "$OUT/drops$r.txt"
    cat <<TOML

[stop]
time_limit_s = $STOP_S
when_complete = false
TOML
}

ns2_ok=1
# SUMMARY_ONLY=1: run nothing, summarize the runs already in $OUT (same settings).
[ "${SUMMARY_ONLY:-0}" = 1 ] && RUN_RECEIVERS="" || RUN_RECEIVERS=$RECEIVERS
for r in $RUN_RECEIVERS; do
    g="$OUT/g$r.txt"
    "$EXPORT" 100 0.1 "$GRAPH_SEED" "$r" 1 1500000 1 > "$g"
    drops "$r"
    last=$(awk '{print $3}' "$OUT/drops$r.txt" | sort -n | tail -1)
    # 10 packets/s until 3 s after the last drop (each loss is recovered well before).
    STOP_S=$(( (last + 1) / 10 + 3 ))
    MESSAGES=$(( STOP_S * 10 ))
    awk '{print $1, $2, $3}' "$OUT/drops$r.txt" > "$OUT/ns-drops$r.txt"
    for s in $(seq 1 "$SEEDS"); do
        scenario "$r" "$s" > "$OUT/r$r-s$s.toml"
        t0=${EPOCHREALTIME/,/.}
        RAYON_NUM_THREADS=1 "$RMCAST" sim "$OUT/r$r-s$s.toml" --out "$OUT/rm-r$r-s$s" --records --quiet
        t1=${EPOCHREALTIME/,/.}
        echo "$t0 $t1" > "$OUT/rm-r$r-s$s.time"
        python3 "$HERE/analyze.py" rmcast "$g" "$OUT/rm-r$r-s$s" "@$OUT/ns-drops$r.txt" 3.0 > "$OUT/rm-r$r-s$s.json"
        if [ "$ns2_ok" = 1 ]; then
            log "ns-2: $r receivers, seed $s (timeout ${NS2_TIMEOUT}s)"
            t0=${EPOCHREALTIME/,/.}
            if timeout "$NS2_TIMEOUT" "$NS" "$HERE/srm.tcl" "$g" "$OUT/ns-r$r-s$s.tr" "$OUT/ns-drops$r.txt" "$STOP_S" "$s" "$MCAST" "$AGENT" "$ROUTE" > "$OUT/ns-r$r-s$s.log" 2>&1; then
                t1=${EPOCHREALTIME/,/.}
                echo "$t0 $t1" > "$OUT/ns-r$r-s$s.time"
                python3 "$HERE/analyze.py" ns2 "$g" "$OUT/ns-r$r-s$s.tr" "@$OUT/ns-drops$r.txt" > "$OUT/ns-r$r-s$s.json"
            else
                log "ns-2 did not finish $r receivers within ${NS2_TIMEOUT}s (or failed); see $OUT/ns-r$r-s$s.log"
                echo "timeout" > "$OUT/ns-r$r-s$s.time"
                ns2_ok=0
            fi
        fi
    done
    # rmcast reference distribution: REF_SEEDS runs in one process, one thread.
    scenario "$r" "{ from = 1, to = $REF_SEEDS, step = 1 }" > "$OUT/ref-r$r.toml"
    t0=${EPOCHREALTIME/,/.}
    RAYON_NUM_THREADS=1 "$RMCAST" sim "$OUT/ref-r$r.toml" --out "$OUT/ref-r$r" --records --quiet
    t1=${EPOCHREALTIME/,/.}
    echo "$t0 $t1" > "$OUT/ref-r$r.time"
    python3 "$HERE/analyze.py" rmcast "$g" "$OUT/ref-r$r" "@$OUT/ns-drops$r.txt" 3.0 > "$OUT/ref-r$r.json"
done

MCAST="$MCAST" LOSS="$LOSS" AGENT="$AGENT" ROUTE="$ROUTE" python3 - "$OUT" "$SEEDS" "$REF_SEEDS" "$NS_VERSION" "$RMCAST" "$RECEIVERS" "$HERE/compare.sh" <<'PY'
import json, os, platform, subprocess, sys
out, seeds, ref_seeds, nsv, rmcast, recvs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6].split()

def load(p):
    with open(p) as f:
        return json.load(f)

def wall(p):
    with open(p) as f:
        t = f.read().split()
    return None if t == ["timeout"] else float(t[1]) - float(t[0])

def mean(xs):
    xs = [x for x in xs if x is not None]
    return round(sum(xs) / len(xs), 4) if xs else None

def median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    h = len(xs) // 2
    return round(xs[h] if len(xs) % 2 else (xs[h - 1] + xs[h]) / 2, 4)

def sd(xs):
    xs = [x for x in xs if x is not None]
    if len(xs) < 2:
        return None
    m = sum(xs) / len(xs)
    return round((sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5, 4)

def agg(runs):
    return {
        "runs": len(runs),
        "norm_latency_mean": mean([r["norm_latency_mean"] for r in runs]),
        "norm_latency_sd": sd([r["norm_latency_mean"] for r in runs]),
        "requests_per_drop_sd": sd([r["requests_per_drop"] for r in runs]),
        "norm_latency_max_mean": mean([r["norm_latency_max"] for r in runs]),
        "norm_latency_min": min((r["norm_latency_min"] for r in runs
                                 if r.get("norm_latency_min") is not None), default=None),
        "requests_per_drop_mean": mean([r["requests_per_drop"] for r in runs]),
        "repairs_per_drop_mean": mean([r["repairs_per_drop"] for r in runs]),
        "repairs_per_drop_sd": sd([r["repairs_per_drop"] for r in runs]),
        "unrecovered": sum(r.get("unrecovered", 0) for r in runs),
    }

def agreement(rm, ns, key):
    """rmcast against ns-2 on one metric (per-run values): the difference of the means, the
    larger of the two run-to-run SDs, whether the difference is within it, and Welch's t."""
    a = [x for x in (r[key] for r in rm) if x is not None]
    b = [x for x in (r[key] for r in ns) if x is not None]
    if len(a) < 2 or len(b) < 2:
        return None
    ma, mb, sa, sb = sum(a) / len(a), sum(b) / len(b), sd(a), sd(b)
    se = (sa ** 2 / len(a) + sb ** 2 / len(b)) ** 0.5
    return {
        "rmcast_minus_ns2": round(ma - mb, 4),
        "spread": max(sa, sb),
        "within_spread": abs(ma - mb) <= max(sa, sb),
        "welch_t": round((ma - mb) / se, 2) if se > 0 else None,
    }

cpu = "unknown"
try:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
except OSError:
    pass
res = {
    "scenario": "seed 003 SRM: rmcast flat_random n=100 p=0.1 (graph seed 3), 1.5 Mb/s, host links 1 ms, "
                "10 pkt/s x 1024 B, "
                + ("one original data packet (the 31st, t=3.0 s) dropped on the source's link, 6 s"
                   if os.environ["LOSS"] == "source" else
                   "one original data packet dropped on each receiver's link in turn (receiver i: the (31 + 10 i)th), "
                   "until 3 s after the last drop"
                   if os.environ["LOSS"] == "receivers" else
                   "one original data packet dropped on each link of the source's tree in turn (link i: the (31 + 10 i)th), "
                   "until 3 s after the last drop")
                + ", " + os.environ["AGENT"] + " C1=2 C2=2 D1=1 D2=1"
                + (" (adaptive)" if os.environ["AGENT"] != "SRM" else "")
                + ", ns-2 multicast routing " + os.environ.get("MCAST", "CtrMcast")
                + (" on shortest-delay routes (link cost = delay)" if os.environ["ROUTE"] == "delay"
                   else " on fewest-hop routes in both tools (ns-2's default link cost 1; rmcast routing = hops, ties by delay)"),
    "route": os.environ["ROUTE"],
    "loss": os.environ["LOSS"],
    "agent": os.environ["AGENT"],
    "machine": {"cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release()},
    "wall_clock": "bash EPOCHREALTIME read before and after each run's process",
    "ns2_version": nsv,
    "rmcast_version": subprocess.run([rmcast, "--version"], capture_output=True, text=True).stdout.strip(),
    "rmcast_commit": subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(sys.argv[7])), "describe", "--always", "--dirty", "--abbrev=7"], capture_output=True, text=True).stdout.strip() or None,
    "seeds_per_tool": seeds,
    "sizes": [],
}
for r in recvs:
    rm_runs, ns_runs, rm_wall, ns_wall = [], [], [], []
    timed_out = False
    for s in range(1, seeds + 1):
        rm_runs += load(f"{out}/rm-r{r}-s{s}.json")
        rm_wall.append(wall(f"{out}/rm-r{r}-s{s}.time"))
        tp = f"{out}/ns-r{r}-s{s}.time"
        if os.path.exists(tp):
            w = wall(tp)
            if w is None:
                timed_out = True
            else:
                ns_wall.append(w)
                ns_runs.append(load(f"{out}/ns-r{r}-s{s}.json"))
    ref = load(f"{out}/ref-r{r}.json")
    e = {
        "receivers": int(r),
        "rmcast_wall_s_per_run": mean(rm_wall) if rm_wall else None,
        "ns2_wall_s_per_run": mean(ns_wall) if ns_wall else None,
        "ns2_timed_out": timed_out,
        "ratio_ns2_over_rmcast": round(mean(ns_wall) / mean(rm_wall), 1) if ns_wall and rm_wall else None,
        # Runs of a few milliseconds varied up to fivefold between invocations on a shared
        # VM (huge-page zeroing, fixed in 5e0c1cd); the medians are the steadier comparison.
        "rmcast_wall_s_median": median(rm_wall),
        "ns2_wall_s_median": median(ns_wall),
        "ratio_of_medians": round(median(ns_wall) / median(rm_wall), 1) if ns_wall and rm_wall else None,
        "rmcast": agg(rm_runs),
        "ns2": agg(ns_runs) if ns_runs else None,
        "ns2_latency_reconstructed_mean": mean([x.get("latency_reconstructed_mean") for x in ns_runs]) if ns_runs else None,
        "rmcast_latency_reconstructed_mean": mean([x.get("latency_reconstructed_mean") for x in rm_runs]),
        "agreement": {
            k: agreement(rm_runs, ns_runs, k) for k in ("norm_latency_mean", "requests_per_drop", "repairs_per_drop")
        } if ns_runs else None,
        "rmcast_reference": dict(agg(ref), wall_s_total=round(wall(f"{out}/ref-r{r}.time"), 3)),
    }
    res["sizes"].append(e)
print(json.dumps(res, indent=2))
PY
