#!/usr/bin/env bash
# bench/ns3/compare.sh: `rmcast bench sim`'s figure (b) — unreliable multicast of 10^4
# 1,024-byte packets from the root of a binary tree to its 1,024 leaves, 1 % loss per link,
# static multicast routes — as an rmcast scenario (bench/ns3/tree.toml, run by `rmcast sim`)
# and as an ns-3 program (bench/ns3/tree.cc, compiled here against Debian's libns3-dev), on
# the same machine in one invocation. Per seed both tools run once, each in its own process
# on one thread; the script checks the delivered and link-hop counts (against each other and
# against the closed form, within SIGMAS standard deviations, and exactly in a lossless run)
# and reports wall time, CPU time and packet hops per second and per CPU-second. The JSON
# goes to $JSON, a summary to stdout, progress to stderr. See bench/ns3/README.md.
#
#   bash bench/ns3/compare.sh                         # 3 seeds, writes docs/perf/ns3.json
#   SEEDS=1 PACKETS=1000 JSON=/tmp/ns3.json bash bench/ns3/compare.sh   # quick
#
# Environment: SEEDS (runs per tool, default 3), FIRST_SEED (seeds are FIRST_SEED.., default 1), PACKETS (default 10000), HEIGHT (default 10:
# 1,024 receivers), SIZE (payload bytes, default 1024), LOSS (per link, default 0.01),
# CHECK_PACKETS (packets of the lossless exact-count run, default 100; 0 skips it), SIGMAS
# (tolerance of the count checks, default 3), OUT (work dir, default a fresh /tmp dir), JSON
# (default docs/perf/ns3.json). Exits 1 if a count check fails.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
export SEEDS=${SEEDS:-3} FIRST_SEED=${FIRST_SEED:-1} PACKETS=${PACKETS:-10000} HEIGHT=${HEIGHT:-10} SIZE=${SIZE:-1024}
export LOSS=${LOSS:-0.01} CHECK_PACKETS=${CHECK_PACKETS:-100} SIGMAS=${SIGMAS:-3}
OUT=${OUT:-$(mktemp -d /tmp/rmcast-ns3.XXXXXX)}
JSON=${JSON:-$ROOT/docs/perf/ns3.json}
log() { echo "compare.sh: $*" >&2; }

# ns-3 3.37 from Debian (ns3, libns3-dev), and the compiler, if missing.
need=()
dpkg-query -W -f='${Status}' libns3-dev 2>/dev/null | grep -q "ok installed" || need+=(ns3 libns3-dev)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
if [ ${#need[@]} -gt 0 ]; then
    log "installing ${need[*]} (apt-get)"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
fi

mkdir -p "$OUT"
log "work dir $OUT"

# Compile the ns-3 program at -O2. Debian's .pc files list two things that do not work as
# given: a stray '-I/usr;' and the absolute paths of libgsl.so/libgslcblas.so, which only
# libgsl-dev ships (the libns3 libraries carry their own dependencies): both are dropped.
flags=()
for f in $(pkg-config --cflags --libs ns3-core ns3-network ns3-internet ns3-point-to-point ns3-traffic-control); do
    case "$f" in
        *\;) ;;
        /*) [ -e "$f" ] && flags+=("$f") ;;
        *) flags+=("$f") ;;
    esac
done
NS3_BIN=$OUT/ns3-tree
log "g++ -O2 bench/ns3/tree.cc"
g++ -O2 -std=c++17 -o "$NS3_BIN" "$HERE/tree.cc" "${flags[@]}"

log "building rmcast (cargo build --release)"
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
(cd "$ROOT" && CARGO_TARGET_DIR="$TARGET" cargo build --release -q -p rmcast >&2)
RMCAST=$TARGET/release/rmcast

mkdir -p "$(dirname "$JSON")"
export NS3_BUILD_NOTE="bench/ns3/tree.cc: g++ $(g++ -dumpfullversion) -O2 -std=c++17; libns3 as Debian ships it"
python3 "$HERE/compare.py" "$RMCAST" "$NS3_BIN" "$HERE/tree.toml" "$OUT" "$JSON"
