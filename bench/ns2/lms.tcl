# bench/ns2/lms.tcl: seed 003's LMS single-loss experiment in ns-2 (2.35), with the thesis
# author's own LMS code (Agent/LMS/Sender, Agent/LMS/Receiver, RtModule/LMS: an Agent/LMS
# behind a Classifier/Lms on every node), on a graph exported by rmcast's own generator
# (bench/ns2/export, an edge list `a b delay_ms bandwidth_bps`).
#
#   ns lms.tcl EDGES TRACE DROPS STOP_S [delay|hops] [SETUP_BYTES]
#
# * `$ns LMS ON` before the nodes: every node (routers and hosts) gets the LMS module.
# * One duplex link per edge (DropTail, queue limit 10000 each way), link cost = delay in ms
#   ("delay", the default: shortest-delay routes, as rmcast) or 1 ("hops"); centralized
#   multicast (CtrMcast) switched to source trees at t = 0.
# * Agent/LMS/Sender on the source, its packet type set to CBR (`set_pkttype 2`): data and
#   the sender's repairs (DMCAST) are then not intercepted by every node's Classifier/Lms,
#   which passes only PT_LMS packets to the node's LMS agent (an LMS_DMCAST of type PT_LMS
#   would be re-subcast by every node it crosses). LMS control packets (SETUP, REFRESH, REQ)
#   set PT_LMS themselves. An Application/Traffic/CBR of 1024-byte messages every 100 ms
#   from t = 0 drives it (message k, 0-based, leaves at k x 0.1 s).
# * One Agent/LMS/Receiver per receiver host, joined to the group.
# * `$snd lms-setup` at t = 0, before the first data packet: the SETUP multicast tells each
#   node's LMS agent its upstream neighbour and each receiver its RTT (2 x the SETUP's
#   one-way delay); each receiver then sends a REFRESH with its replier cost, 0 for all. A
#   router adopts the interface of a REFRESH whose cost is strictly lower than its
#   replier's (initially LMS_INFINITY), so with equal costs each router's replier link is
#   the one the *first* REFRESH came up: the downstream receiver closest in time (SETUP down
#   + REFRESH up). `loss-smpl-ivl` stays 0: static repliers, as the thesis ran them (§5.8).
#   To make that rmcast's rule (crates/proto/src/lms `choose_replier`: the interface to the
#   closest downstream receiver by propagation delay, ties to the lowest interface), (1) the
#   SETUP is sent SETUP_BYTES (default 40) long (LmsSender sends it `packetSize_` long,
#   1024 bytes, 5.5 ms per 1.5 Mb/s hop, which would rank candidates by hop count as much as
#   by delay; the CBR's first `sendmsg` sets packetSize_ back to 1024). A receiver's RTT
#   (`rtt_`, which ns-2's own normalized latency divides by and whose double is its first
#   NAK timeout) is twice the SETUP's one-way delay, so with 40 bytes it is about the
#   propagation RTT alone, below the time a 1024-byte repair takes over several hops: the
#   first NAK timer can fire before the repair arrives and send a second NAK (counted apart
#   by lms_analyze.py), and ns-2's own normalized latency comes out larger. SETUP_BYTES 1024
#   is ns-2's own behaviour; and (2) lms-compare.sh hands this script the edge list with
#   ties nudged (`lms_analyze.py ns2-edges`: each tree link from a router to its k-th
#   child, in edge-list order, k ns longer), so that among equally close receivers (hosts
#   sharing a router, the leaves of a binary tree) the REFRESH up the lowest interface
#   arrives first, as rmcast's lowest interface wins (NUDGE=0 there: the plain edge list).
#   What is left is the REFRESH's own transmission time (104 bytes, 0.55 ms per hop);
#   lms_analyze.py reports how many routers still chose differently (`replier_mismatch`).
# * Each line `FROM TO SEQ` of DROPS puts an LMSErrorModel on the link FROM -> TO dropping
#   the packet of type CBR whose RTP seqno is SEQ (drop-packet 2 1000000000 SEQ), except
#   LMS_DMCASTs: exactly that one original data packet. DROPS "-": no loss.
# * Every packet event goes to TRACE (`$ns trace-all`); at STOP_S the script prints every
#   receiver's `print-stats`, the sender's, and the `print-all-stats` line (with the number
#   of drops), then exits.
if {[llength $argv] < 4 || [llength $argv] > 6} {
    puts stderr "usage: ns lms.tcl EDGES TRACE DROPS STOP_S \[delay|hops\] \[SETUP_BYTES\]"
    exit 2
}
lassign $argv edges tracefile dropfile stop route setup_bytes
if {$setup_bytes eq ""} { set setup_bytes 40 }
if {$route eq ""} { set route delay }
if {$route ne "delay" && $route ne "hops"} {
    puts stderr "lms.tcl: routes must be by delay or hops, not $route"
    exit 2
}

# ns-2.35's default packet format has no LMS header: without this, hdr_lms::offset_ stays
# 0 and the agents' LMS header overlays the common header (the sender's bzero of it zeroes
# the packet's interface, and the source's first packet dies in a multicast cache miss).
add-packet-header Lms
set ns [new Simulator -multicast on]
$ns LMS ON

source [file join [file dirname [info script]] common.tcl]
read_edges $edges lms.tcl
# trace-all before the links: it traces only links created after it.
set tf [open $tracefile w]
$ns trace-all $tf
for {set i 0} {$i <= $maxnode} {incr i} { set n($i) [$ns node] }
foreach l $links {
    lassign $l a b d bw
    $ns duplex-link $n($a) $n($b) $bw ${d}ms DropTail
    $ns queue-limit $n($a) $n($b) 10000
    $ns queue-limit $n($b) $n($a) 10000
    if {$route eq "delay"} {
        $ns cost $n($a) $n($b) $d
        $ns cost $n($b) $n($a) $d
    }
}

set mrthandle [$ns mrtproto CtrMcast {}]
set group [Node allocaddr]
$ns at 0.0 "$mrthandle switch-treetype $group"

# Called by every receiver on LMS_SETUP (lms-receiver.cc) with its RTT to the source.
set max_rtt 0
proc set_max_rtt {rtt} {
    global max_rtt
    if {$rtt > $max_rtt} { set max_rtt $rtt }
}

set ndrops [install_drops $dropfile lms.tcl LMSErrorModel]

set snd [new Agent/LMS/Sender]
$snd set dst_addr_ $group
$snd set dst_port_ 0
$snd set packetSize_ 1024
$ns attach-agent $n($source) $snd
$snd set_pkttype 2

foreach r $receivers {
    set rcv($r) [new Agent/LMS/Receiver]
    $rcv($r) set dst_addr_ $group
    $rcv($r) set dst_port_ 0
    $ns attach-agent $n($r) $rcv($r)
    $ns at 0.0 "$n($r) join-group $rcv($r) $group"
}

# Scheduled before the CBR's start at the same instant, so it runs first (ns-2 runs
# same-time events in the order they were scheduled): the SETUP does not queue behind data.
$snd set packetSize_ $setup_bytes
$ns at 0.0 "$snd lms-setup"

set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ 1024
$cbr set interval_ 0.1
$cbr set random_ 0
$cbr attach-agent $snd
$ns at 0.0 "$cbr start"

# The stats are printed by the C++ agents (printf, flushed at exit), so nothing else is
# written to stdout: receiver K's block is headed `rcvK:` (lms-receiver.cc numbers receivers
# in creation order, i.e. the order of the `# receivers` header), the sender's `sender0:`,
# and the last line is `print-all-stats`' (sender: duplicate requests per drop, max
# duplicate NAKs; receivers: the same, exposure, mean / min / max normalized latency).
proc finish {} {
    global ns tf snd rcv receivers ndrops
    $ns flush-trace
    close $tf
    foreach r $receivers { $rcv($r) print-stats }
    $snd print-stats
    $snd print-all-stats $ndrops
    $rcv([lindex $receivers 0]) print-all-stats $ndrops
    exit 0
}
$ns at $stop "finish"
$ns run
