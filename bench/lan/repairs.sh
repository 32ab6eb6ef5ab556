#!/usr/bin/env bash
# repairs.sh: repairs per loss on loopback. For each protocol, a file (SIZE bytes, default 4 MB)
# to 3 receivers at --rate 200M, receiver 0 dropping one in DROP (default 20) of the protocol
# packets it receives (`rmcast recv --drop-one-in`); dsp: one region, receiver 0 a member.
# Prints the datagrams receiver 0 lost, the repairs sent (the sender's and the receivers': srm's
# and lms's members, dsp's designated receiver) and their ratio. B: the rmcast binary; PROTOS:
# the protocols.
#   B=target/release/rmcast DROP=5 PROTOS="dsp prmp" bench/lan/repairs.sh
set -u
B=${B:-target/release/rmcast}; DROP=${DROP:-20}; SIZE=${SIZE:-4000000}
O=$(mktemp -d); trap 'rm -rf "$O"' EXIT
head -c "$SIZE" /dev/urandom > "$O/payload.bin"
port=47600
for p in ${PROTOS:-pgm saw bap rra xtp prmp srm ff lms dsp}; do
  port=$((port + 5)); G=239.255.78.90:$port
  for r in 0 1 2; do
    x=(); [ $r = 0 ] && x=(--drop-one-in "$DROP")
    [ "$p" = dsp ] && x+=(--region 0 --node-id $((302 - r)))
    "$B" recv -g $G -i lo --quiet --json --wait 60 --dir "$O/out$r" "${x[@]}" > "$O/r$r.json" 2> "$O/r$r.err" &
  done
  sleep 0.3
  s0=$(date +%s.%N)
  "$B" send "$O/payload.bin" -g $G -i lo --receivers 3 --evict-after 30 --json --quiet \
    --protocol "$p" --rate 200M > "$O/s.json" 2> "$O/s.err"
  s1=$(date +%s.%N); wait
  python3 - "$p" "$s0" "$s1" "$O" <<'PY'
import json, sys
p, t0, t1, o = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
s = json.load(open(f"{o}/s.json"))
rs = [json.load(open(f"{o}/r{i}.json")) for i in range(3)]
lost = rs[0]["driver"]["dropped_injected"]
rep = s.get("agent", {}).get("repairs_sent", 0) + sum(r.get("repairs_sent", 0) for r in rs)
ok = all(r["success"] for r in rs)
print(f"{p:5s} {t1 - t0:6.2f} s  lost {lost:5d}  repairs {rep:6d}  per loss {rep / max(lost, 1):5.2f}"
      f"  duplicates at receiver 0 {rs[0]['duplicates']:5d}  {'ok' if ok else 'FAILED'}")
PY
  rm -rf "$O"/out*
done
