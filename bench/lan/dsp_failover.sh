#!/usr/bin/env bash
# dsp_failover.sh [RUNS] [BIN]: issue 24's scenario, RUNS times (default 10), as root.
# 1 sender and 5 receivers in network namespaces on a bridge (own names: dspfsw, dspfh0..5),
# all in region 0, 10 % of the Ethernet frames to the receivers dropped on the bridge
# (nftables in the switch's namespace), a 20 MB file, `rmcast send -n 5 --protocol dsp
# --datagram-size 1400 --rate 0`; receiver 5 has the lowest node id (--node-id 11; the
# others 12..15), so it is the designated receiver, and is killed (SIGKILL) 1.5 s after the
# sender starts. A run passes when every survivor holds the file byte-exact, the killed one
# is `evicted`, the sender exits 1 and its summary lists the re-election. One line per run,
# then the count; exit 0 only when every run passed. Leaves no namespace behind.
set -u
runs=${1:-10}
bin=${2:-${CARGO_TARGET_DIR:-target}/release/rmcast}
[ -x "$bin" ] || { echo "no rmcast binary at $bin (cargo build --release -p rmcast)" >&2; exit 2; }
work=$(mktemp -d)
down() {
  for n in $(ip netns list | awk '/^dspf/{print $1}'); do ip netns del "$n"; done
  rm -rf "$work"
}
trap down EXIT
ip netns add dspfsw
ip -n dspfsw link add br0 type bridge
ip -n dspfsw link set br0 type bridge mcast_snooping 0
ip -n dspfsw link set br0 up
for h in 0 1 2 3 4 5; do
  ip netns add dspfh$h
  ip -n dspfsw link add p$h type veth peer name eth0 netns dspfh$h
  ip -n dspfsw link set p$h master br0 up
  ip -n dspfh$h link set lo up
  ip -n dspfh$h addr add 10.78.0.$((h+1))/24 dev eth0
  ip -n dspfh$h link set eth0 up
  ip -n dspfh$h route add 224.0.0.0/4 dev eth0
done
ip netns exec dspfsw nft add table bridge chaos
ip netns exec dspfsw nft 'add chain bridge chaos f { type filter hook forward priority 0; }'
ip netns exec dspfsw nft add rule bridge chaos f oifname != "p0" numgen random mod 1000 '<' 100 counter drop
head -c 20000000 /dev/urandom >"$work/f.bin"
pass=0
for run in $(seq 1 "$runs"); do
  d=$work/run$run
  pids=()
  for r in 1 2 3 4 5; do
    mkdir -p "$d/r$r"
    id=$((10 + r)); [ $r = 5 ] && id=11; [ $r = 1 ] && id=15
    ip netns exec dspfh$r "$bin" recv --group 239.78.0.1:7000 --interface eth0 --node-id $id \
      --region 0 --quiet --json --wait 60 --dir "$d/r$r" >"$d/r$r.json" 2>"$d/r$r.err" &
    pids+=($!)
  done
  sleep 0.5
  start=$(date +%s.%N)
  ip netns exec dspfh0 "$bin" send -n 5 --group 239.78.0.1:7000 --interface eth0 --protocol dsp \
    --datagram-size 1400 --rate 0 --json --quiet "$work/f.bin" >"$d/send.json" 2>"$d/send.err" &
  spid=$!
  sleep 1.5
  kill -9 "${pids[4]}" 2>/dev/null
  wait "$spid"; code=$?
  end=$(date +%s.%N)
  for p in "${pids[@]:0:4}"; do wait "$p"; done
  wait "${pids[4]}" 2>/dev/null
  ok=0
  for r in 1 2 3 4; do cmp -s "$work/f.bin" "$d/r$r/f.bin" && ok=$((ok+1)); done
  verdict=$(python3 - "$d/send.json" "$code" "$ok" <<'PY'
import json, sys
path, code, ok = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
try:
    s = json.load(open(path))
except Exception as e:
    print(f"FAIL no summary ({e})"); sys.exit()
rx = {r["node"]: r for r in s["receivers"]}
victim = rx.get(11, {}).get("outcome")
changes = s.get("role_changes", [])
elected = any("0000000b evicted" in c and "elected" in c for c in changes)
surv = [rx.get(n, {}).get("outcome") for n in (12, 13, 14, 15)]
good = code == 1 and ok == 4 and victim == "evicted" and elected and all(o == "completed" for o in surv)
print(("PASS" if good else "FAIL"),
      f"exit {code}, {ok}/4 survivors byte-exact, killed one {victim}, survivors {surv}, "
      f"re-election {changes}")
PY
)
  printf 'run %2d: %s (%.1f s)\n' "$run" "$verdict" "$(echo "$end - $start" | bc)"
  case $verdict in PASS*) pass=$((pass+1));; esac
  rm -rf "$d"/r*/
done
echo "$pass of $runs runs passed"
[ "$pass" = "$runs" ]
