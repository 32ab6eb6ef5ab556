#!/bin/sh
# How crates/wire/tests/data/libnorm_cc_loss10.pcap was made (issue 62), with
# `sh norm_capture.sh OUT 10 cc`: NRL's libnorm 1.5.9 (Debian's libnorm-dev) sends a
# 100,000-byte file with bench/norm/normfile.cc, under NORM-CC, to two receivers (node ids 2
# and 3) on the loopback of a network namespace of its own, while dumpcap captures every
# datagram.
# An nftables rule drops LOSS % of the UDP datagrams at the input of the namespace (after the
# capture point), so receivers NACK, and the sender answers with parity (Reed-Solomon)
# segments and FLUSH commands naming the receivers, which ACK them.
#
#   sh norm_capture.sh OUT.pcap LOSS [cc]    (as root; needs ip, nft, dumpcap, g++, libnorm-dev)
set -eu
out=$1
loss=$2
cc=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
ns=normcap$$
g++ -O2 -o "$work/normfile" "$here/../../../../bench/norm/normfile.cc" -lnorm
# The file: bytes i*7+i/256 mod 256, so that a test can rebuild it without the capture.
perl -e 'print pack("C*", map { ($_ * 7 + int($_ / 256)) % 256 } 0 .. 99999)' > "$work/file.bin"
ip netns add "$ns"
trap 'ip netns del "$ns" 2>/dev/null; rm -rf "$work"' EXIT
ip -n "$ns" link set lo up
ip -n "$ns" route add 224.0.0.0/4 dev lo
if [ "$loss" != 0 ]; then
  ip netns exec "$ns" nft -f - <<NFT
table inet loss {
  chain input {
    type filter hook input priority 0;
    udp dport 6003 numgen random mod 100 < $loss drop
  }
}
NFT
fi
ip netns exec "$ns" dumpcap -q -P -i lo -f "udp port 6003" -w "$work/cap.pcap" &
cap=$!
sleep 1
mkdir -p "$work/r2" "$work/r3"
ip netns exec "$ns" "$work/normfile" recv 239.1.2.3 6003 lo 2 "$work/r2" &
r2=$!
ip netns exec "$ns" "$work/normfile" recv 239.1.2.3 6003 lo 3 "$work/r3" &
r3=$!
sleep 0.5
ip netns exec "$ns" timeout 60 "$work/normfile" send 239.1.2.3 6003 lo 2000000 2,3 \
  "$work/file.bin" $cc grtt=0.01
sleep 0.5
kill "$r2" "$r3" 2>/dev/null || true
sleep 0.5
kill "$cap"
wait "$cap" 2>/dev/null || true
cmp "$work/file.bin" "$work/r2/bench.bin"
cmp "$work/file.bin" "$work/r3/bench.bin"
cp "$work/cap.pcap" "$out"
echo "captured $(stat -c %s "$out") bytes into $out"
