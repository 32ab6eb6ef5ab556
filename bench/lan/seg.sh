#!/usr/bin/env bash
# seg.sh up N | down: a bridge namespace pfsw and hosts pfh0..pfhN-1 (10.77.0.1..), root; for profiling by hand (run.sh)
set -e
case $1 in
up)
  ip netns add pfsw; ip -n pfsw link add br0 type bridge; ip -n pfsw link set br0 type bridge mcast_snooping 0; ip -n pfsw link set br0 up
  for h in $(seq 0 $(($2-1))); do
    ip netns add pfh$h
    ip -n pfsw link add p$h type veth peer name eth0 netns pfh$h
    ip -n pfsw link set p$h master br0 up
    ip -n pfh$h link set lo up; ip -n pfh$h addr add 10.77.0.$((h+1))/24 dev eth0; ip -n pfh$h link set eth0 gso_max_segs 1 up
    ip -n pfh$h route add 224.0.0.0/4 dev eth0
  done;;
down)
  for n in $(ip netns list | awk '/^pf/{print $1}'); do ip netns del $n; done;;
esac
