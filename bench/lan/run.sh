#!/usr/bin/env bash
# run.sh PROTO [extra send args]: a 1-sender, 3-receiver transfer on the seg.sh bridge; prints goodputs and the sender's CPU
# Needs seg.sh up 4 first and a file $O/f.bin (e.g. head -c 100000000 /dev/urandom > /tmp/rmcast-lan/f.bin);
# PERF=1 records perf profiles of the sender and receiver 1 into $O/send.data and $O/recv.data.
B=${B:-target/release/rmcast}
P=$1; shift
O=${OUT:-/tmp/rmcast-lan}; rm -rf $O/out; mkdir -p $O/out
for r in 1 2 3; do
  if [ $r = 1 ]; then pre="${PERF:+perf record -g -o $O/recv.data}"; else pre=""; fi
  ip netns exec pfh$r $pre $B recv --group 239.77.0.1:7700 --interface eth0 --dir $O/out/r$r --json --quiet --force --wait 30 > $O/out/r$r.json 2>$O/out/r$r.err &
done
sleep 0.5
/usr/bin/time -f "sender cpu user %U sys %S wall %e" ip netns exec pfh0 ${PERF:+perf record -g -o $O/send.data} $B send --receivers 3 --protocol $P --group 239.77.0.1:7700 --interface eth0 --json --quiet "$@" $O/f.bin > $O/out/s.json 2>$O/out/s.err
wait
python3 -c "
import json
s=json.load(open('$O/out/s.json')); print('sender', {k:s[k] for k in s if k in ('protocol','seconds','goodput_mbit_s','datagram_size')})
for r in (1,2,3):
  v=json.load(open(f'$O/out/r{r}.json')); print('r',r, v.get('goodput_mbit_s'))
"
