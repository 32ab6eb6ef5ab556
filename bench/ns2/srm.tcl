# bench/ns2/srm.tcl: seed 003's SRM loss experiments in ns-2 (2.35), on a graph exported
# by rmcast's own generator (bench/ns2/export, an edge list `a b delay_ms bandwidth_bps`).
#
#   ns srm.tcl EDGES TRACE DROPS STOP_S RUN [CtrMcast|DM] [SRM|SRM/Adaptive] [delay|hops]
#
# Full packet-level Simulator with centralized (CtrMcast, the default) or dense-mode (DM)
# multicast routing, one Agent/SRM (or Agent/SRM/Adaptive) per member with ns-2's default
# timers (C1=2 C2=2 D1=1 D2=1, session messages every sessionDelay_=1 s), a CBR source of
# 1024-byte messages at 10 packets/s from t=0, and for each line `FROM TO SEQ` of the file
# DROPS an SRMErrorModel on the link FROM->TO dropping the one original data packet with
# sequence number SEQ (0-based; 30 = the 31st, sent at t=3.0 s). DROPS "-": no loss. Every
# SRM event (Q DETECT, Q SENDNACK, P SENDREP, Q REPAIR, ...) goes to TRACE. Routes: each
# link's cost is its delay in ms ("delay", the default: shortest-delay paths, as rmcast's
# simulator routes; ns-2's costs are doubles, and a path's must stay below its 0x3fff
# "infinity", which whole microseconds exceeded at 100 receivers) or 1 ("hops", ns-2's
# default: fewest hops).
if {[llength $argv] < 5 || [llength $argv] > 8} {
    puts stderr "usage: ns srm.tcl EDGES TRACE DROPS STOP_S RUN \[CtrMcast|DM\] \[SRM|SRM/Adaptive\] \[delay|hops\]"
    exit 2
}
lassign $argv edges tracefile dropfile stop run mproto agent route
if {$mproto eq ""} { set mproto CtrMcast }
if {$agent eq ""} { set agent SRM }
if {$route eq ""} { set route delay }
if {$route ne "delay" && $route ne "hops"} {
    puts stderr "srm.tcl: routes must be by delay or hops, not $route"
    exit 2
}
if {$mproto ne "CtrMcast" && $mproto ne "DM"} {
    puts stderr "srm.tcl: multicast routing must be CtrMcast or DM, not $mproto"
    exit 2
}
if {$agent ne "SRM" && $agent ne "SRM/Adaptive"} {
    puts stderr "srm.tcl: the agent must be SRM or SRM/Adaptive, not $agent"
    exit 2
}

# Replication RUN (1, 2, ...) draws from substream RUN of ns-2's default RNG (MRG32k3a, seed
# 12345), as the ns manual prescribes for independent replications. Seeding with the run
# number instead (`$defaultRNG seed RUN`) is not that: with small seeds the first draws are
# tiny and grow with the seed (seed 1: 0.0003, 0.556, 0.014; seed 20: 0.0067, 0.118, 0.284),
# so the source, the first member to draw, sent its first session message at 0.9001-0.9003 s
# in every run, ahead of the others, and its session messages queued half as long as theirs.
if {![string is integer -strict $run] || $run < 1} {
    puts stderr "srm.tcl: RUN must be a positive integer, not $run"
    exit 2
}
global defaultRNG
for {set i 0} {$i < $run} {incr i} { $defaultRNG next-substream }

set ns [new Simulator -multicast on]

# Read the edge list and its header (# source S, # receivers R...).
source [file join [file dirname [info script]] common.tcl]
read_edges $edges srm.tcl
for {set i 0} {$i <= $maxnode} {incr i} { set n($i) [$ns node] }
foreach l $links {
    lassign $l a b d bw
    $ns duplex-link $n($a) $n($b) $bw ${d}ms DropTail
    $ns queue-limit $n($a) $n($b) 1000
    $ns queue-limit $n($b) $n($a) 1000
    if {$route eq "delay"} {
        set c $d
        $ns cost $n($a) $n($b) $c
        $ns cost $n($b) $n($a) $c
    }
}

set mrthandle [$ns mrtproto $mproto {}]
set group [Node allocaddr]
# CtrMcast computes the trees centrally (no flooding or pruning to simulate); switched to
# source trees at once, so packets follow the shortest paths from the source as rmcast's do
# (ns-2 2.35 dies with a floating-point exception when the switch comes at 0.001 s).
if {$mproto eq "CtrMcast"} {
    $ns at 0.0 "$mrthandle switch-treetype $group"
}

install_drops $dropfile srm.tcl SRMErrorModel

set tf [open $tracefile w]
set members [concat [list $source] $receivers]
foreach m $members {
    set srm($m) [new Agent/$agent]
    $srm($m) set dst_addr_ $group
    $srm($m) set dst_port_ 0
    $srm($m) trace $tf
    $ns attach-agent $n($m) $srm($m)
    $ns at 0.0 "$srm($m) start"
}
set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ 1024
$cbr set interval_ 0.1
$cbr set random_ 0
$cbr attach-agent $srm($source)
$srm($source) set tg_ $cbr
$srm($source) set app_fid_ 0
$srm($source) set packetSize_ 1024
$ns at 0.0 "$srm($source) start-source"

proc finish {} {
    global ns tf
    flush $tf
    close $tf
    exit 0
}
$ns at $stop "finish"
$ns run
