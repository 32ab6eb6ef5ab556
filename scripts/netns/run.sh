#!/usr/bin/env bash
# Multi-host tests of `rmcast send`/`rmcast recv`: Linux network namespaces as hosts on a
# bridge (one veth pair per host), IP multicast across the bridge. Needs root and iproute2.
#
#   bash scripts/netns/run.sh [path/to/rmcast [extra rmcast send options...]]
#
# Scenarios (1 sender, 5 receivers, a 20 MB file):
#   1. 10 % injected loss on every receiver: every digest matches, every exit status is 0;
#   2. one receiver killed (SIGKILL) halfway: the sender evicts it, the other four complete,
#      the sender's exit status is 1 and its summary names the evicted receiver;
#   3. a flood of random datagrams (some with an rmcast-looking header) at the receivers'
#      group and port during a transfer: the transfer completes and the rejects are counted;
#   4. an IPv6 group (ff15::77), 5 MB, 5 % loss: every digest matches.
# Without root or `ip`, prints "skipped: ..." and exits 0.
# Environment: NETNS_SCENARIOS="1 2 3" runs only those scenarios (default all four);
# NETNS_REGIONS=N starts receiver r with `--region $((r % N))` (for --protocol dsp).
set -uo pipefail

BIN=${1:-target/release/rmcast}
shift || true
SEND_EXTRA=("$@")            # extra `rmcast send` options, e.g. --protocol bap
SCENARIOS=" ${NETNS_SCENARIOS:-1 2 3 4} "
REGIONS=${NETNS_REGIONS:-0}
want() { [[ "$SCENARIOS" == *" $1 "* ]]; }
if [ "$(id -u)" != 0 ]; then
  echo "skipped: multi-host netns tests need root (run: sudo bash $0 $BIN)"
  exit 0
fi
if ! command -v ip >/dev/null 2>&1; then
  echo "skipped: multi-host netns tests need iproute2 (apt-get install iproute2)"
  exit 0
fi
BIN=$(readlink -f "$BIN")
[ -x "$BIN" ] || { echo "error: $BIN is not an executable rmcast binary" >&2; exit 2; }

P=rmn$$                       # prefix for namespaces and links (short: ifnames <= 15 chars)
BR=br$P
GROUP=239.77.0.1:6000
WORK=$(mktemp -d /tmp/rmcast-netns.XXXXXX)
HOSTS="s r1 r2 r3 r4 r5 f"
FAILS=0

cleanup() {
  for h in $HOSTS; do ip netns pids "$P$h" 2>/dev/null | xargs -r kill -9 2>/dev/null; done
  for h in $HOSTS; do ip netns del "$P$h" 2>/dev/null; done
  ip link del "$BR" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

ip link add "$BR" type bridge || { echo "error: cannot create a bridge" >&2; exit 2; }
ip link set "$BR" type bridge mcast_snooping 0 2>/dev/null
ip link set "$BR" up
i=1
for h in $HOSTS; do
  ns=$P$h
  ip netns add "$ns"
  ip link add "v$P$h" type veth peer name eth0 netns "$ns"
  ip link set "v$P$h" master "$BR" up
  ip -n "$ns" link set lo up
  ip -n "$ns" addr add "10.77.0.$i/24" dev eth0
  # one GSO segment at most: the kernel cuts segmented UDP sends into frames here, as a NIC
  # would, instead of the bridge forwarding 44 frames as one
  ip -n "$ns" link set eth0 gso_max_segs 1 up
  ip -n "$ns" route add 224.0.0.0/4 dev eth0
  ip -n "$ns" -6 route replace ff00::/8 dev eth0 table local 2>/dev/null || true
  i=$((i + 1))
done
ip netns exec "${P}s" sysctl -qw net.core.rmem_max=16777216 net.core.wmem_max=16777216 2>/dev/null

head -c 20000000 /dev/urandom > "$WORK/big.bin"
sleep 2   # IPv6 duplicate-address detection of the link-local addresses (scenario 4)
WANT=$(sha256sum < "$WORK/big.bin" | cut -d' ' -f1)

ok()   { echo "  ok: $*"; }
bad()  { echo "  FAIL: $*"; FAILS=$((FAILS + 1)); }

# start_receivers NAME EXTRA... : one `rmcast recv` per receiver host, JSON summaries saved
start_receivers() {
  local name=$1; shift
  for r in 1 2 3 4 5; do
    mkdir -p "$WORK/$name/r$r"
    local region=()
    [ "$REGIONS" -gt 0 ] && region=(--region $((r % REGIONS)))
    ip netns exec "$P"r$r "$BIN" recv --group $GROUP --interface eth0 --dir "$WORK/$name/r$r" \
      --node-id $((1000 + r)) --json --quiet --wait 60 ${region[@]+"${region[@]}"} "$@" --drop-seed $((r * 7)) \
      > "$WORK/$name/r$r.json" 2> "$WORK/$name/r$r.err" &
    eval "RPID$r=$!"
  done
  sleep 0.5
}

wait_receivers() {
  local name=$1 r rc
  for r in 1 2 3 4 5; do
    eval "wait \$RPID$r"; rc=$?
    eval "RC$r=$rc"
  done
}

digest_ok() { [ "$(sha256sum < "$1" 2>/dev/null | cut -d' ' -f1)" = "$WANT" ]; }

if want 1; then
echo "== scenario 1: 1 sender, 5 receivers, 20 MB, 10 % injected loss at every receiver"
start_receivers s1 --drop-rate 0.1
T0=$(date +%s.%N)
ip netns exec "${P}s" "$BIN" send --group $GROUP --interface eth0 --receivers 5 --json --quiet ${SEND_EXTRA[@]+"${SEND_EXTRA[@]}"} \
  "$WORK/big.bin" > "$WORK/s1.json" 2> "$WORK/s1.err"
SRC=$?
T1=$(date +%s.%N)
wait_receivers s1
[ $SRC = 0 ] && ok "sender exit 0" || { bad "sender exit $SRC"; cat "$WORK/s1.err"; }
for r in 1 2 3 4 5; do
  eval "rc=\$RC$r"
  if [ "$rc" = 0 ] && digest_ok "$WORK/s1/r$r/big.bin"; then ok "receiver $r: exit 0, digest matches"
  else bad "receiver $r: exit $rc, digest $(sha256sum < "$WORK/s1/r$r/big.bin" 2>/dev/null | cut -c1-16)"; cat "$WORK/s1/r$r.err"; fi
done
echo "  sender: $(grep -o '"goodput_mbit_s": [0-9.]*' "$WORK/s1.json"), $(grep -o '"repairs_sent": [0-9]*' "$WORK/s1.json"), wall $(echo "$T1 - $T0" | bc 2>/dev/null || echo ?)s"

fi

if want 2; then
echo "== scenario 2: receiver 3 killed halfway; the sender must evict it and say so"
start_receivers s2
ip netns exec "${P}s" "$BIN" send --group $GROUP --interface eth0 --receivers 5 --json --quiet ${SEND_EXTRA[@]+"${SEND_EXTRA[@]}"} \
  --rate 100M --evict-after 2 "$WORK/big.bin" > "$WORK/s2.json" 2> "$WORK/s2.err" &
SPID=$!
# kill receiver 3 once it has written about half of the file
for _ in $(seq 1 200); do
  sz=$(find "$WORK/s2/r3" -name '*.part' -printf '%s\n' 2>/dev/null | head -1)
  [ -n "$sz" ] && [ "$sz" -ge 10000000 ] && break
  sleep 0.05
done
kill -9 "$RPID3" 2>/dev/null
wait "$RPID3" 2>/dev/null
echo "  killed receiver 3 at ${sz:-?} bytes"
wait $SPID; SRC=$?
wait_receivers s2
[ $SRC = 1 ] && ok "sender exit 1 (not every receiver completed)" || { bad "sender exit $SRC, expected 1"; cat "$WORK/s2.err"; }
if tr -d '\n ' < "$WORK/s2.json" | grep -q '"node":1003,[^}]*"outcome":"evicted"'; then ok "summary: receiver 1003 evicted"
else bad "summary does not show receiver 1003 evicted"; cat "$WORK/s2.json"; fi
for r in 1 2 4 5; do
  eval "rc=\$RC$r"
  if [ "$rc" = 0 ] && digest_ok "$WORK/s2/r$r/big.bin"; then ok "receiver $r completed"
  else bad "receiver $r: exit $rc"; cat "$WORK/s2/r$r.err"; fi
done
n=$(tr -d '\n ' < "$WORK/s2.json" | grep -o '"outcome":"completed"' | wc -l)
[ "$n" = 4 ] && ok "summary: 4 completed" || bad "summary: $n completed, expected 4"

fi

if want 3; then
echo "== scenario 3: flood of random datagrams at the receivers' group and port"
start_receivers s3
ip netns exec "${P}f" bash -c '
  G=${1%:*}; PORT=${1#*:}
  hdr=$(printf "RM\\x01\\x01\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x01\\x00\\x00\\x00\\x02\\x00\\x00\\x00\\x05")
  while :; do
    head -c $((RANDOM % 1400 + 1)) /dev/urandom > /dev/udp/$G/$PORT
    { printf "%s" "$hdr"; head -c 5 /dev/urandom; } > /dev/udp/$G/$PORT
  done' flood $GROUP 2>/dev/null &
FPID=$!
sleep 0.5
ip netns exec "${P}s" "$BIN" send --group $GROUP --interface eth0 --receivers 5 --json --quiet ${SEND_EXTRA[@]+"${SEND_EXTRA[@]}"} \
  --rate 100M "$WORK/big.bin" > "$WORK/s3.json" 2> "$WORK/s3.err"
SRC=$?
kill "$FPID" 2>/dev/null; wait "$FPID" 2>/dev/null
wait_receivers s3
[ $SRC = 0 ] && ok "sender exit 0" || { bad "sender exit $SRC"; cat "$WORK/s3.err"; }
for r in 1 2 3 4 5; do
  eval "rc=\$RC$r"
  rej=$(tr -d '\n ' < "$WORK/s3/r$r.json" | grep -o '"rejected_malformed":[0-9]*' | cut -d: -f2)
  str=$(tr -d '\n ' < "$WORK/s3/r$r.json" | grep -o '"rejected_stranger":[0-9]*' | cut -d: -f2)
  if [ "$rc" = 0 ] && digest_ok "$WORK/s3/r$r/big.bin" && [ "${rej:-0}" -gt 0 ]; then
    ok "receiver $r completed; rejected ${rej} malformed + ${str:-0} stranger datagrams"
  else bad "receiver $r: exit $rc, rejected ${rej:-none}"; cat "$WORK/s3/r$r.err"; fi
done

fi

if want 4; then
echo "== scenario 4: IPv6 group (ff15::77), 5 receivers, 5 MB, 5 % injected loss"
head -c 5000000 "$WORK/big.bin" > "$WORK/v6.bin"
WANT6=$(sha256sum < "$WORK/v6.bin" | cut -d' ' -f1)
SAVE_GROUP=$GROUP; GROUP='[ff15::77]:6001'
start_receivers s4 --drop-rate 0.05
ip netns exec "${P}s" "$BIN" send --group $GROUP --interface eth0 --receivers 5 --json --quiet \
  "$WORK/v6.bin" > "$WORK/s4.json" 2> "$WORK/s4.err"
SRC=$?
wait_receivers s4
GROUP=$SAVE_GROUP
[ $SRC = 0 ] && ok "sender exit 0" || { bad "sender exit $SRC"; cat "$WORK/s4.err"; }
for r in 1 2 3 4 5; do
  eval "rc=\$RC$r"
  if [ "$rc" = 0 ] && [ "$(sha256sum < "$WORK/s4/r$r/v6.bin" 2>/dev/null | cut -d' ' -f1)" = "$WANT6" ]; then
    ok "receiver $r: exit 0, digest matches"
  else bad "receiver $r: exit $rc"; cat "$WORK/s4/r$r.err"; fi
done

fi

if [ $FAILS = 0 ]; then echo "netns: all scenarios passed"; exit 0; fi
echo "netns: $FAILS checks failed"; exit 1
