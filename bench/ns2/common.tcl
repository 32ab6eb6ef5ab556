# bench/ns2/common.tcl: what srm.tcl and lms.tcl share: reading the edge list
# bench/ns2/export prints (`a b delay_ms bandwidth_bps` per line, `# source S` and
# `# receivers R...` headers, other `#` lines ignored) and the drops file (`FROM TO SEQ ...`
# per line).
#
# read_edges PATH WHO: sets the globals links (a list of {a b delay_ms bandwidth_bps}),
# maxnode, source and receivers; a file without both headers ends the run with status 2,
# its message naming WHO.
proc read_edges {path who} {
    global links maxnode source receivers
    set fh [open $path r]
    set maxnode 0
    set links {}
    set source -1
    set receivers {}
    while {[gets $fh line] >= 0} {
        if {[regexp {^# source (\d+)} $line -> s]} { set source $s; continue }
        if {[regexp {^# receivers (.*)$} $line -> r]} { set receivers $r; continue }
        if {[regexp {^\s*#} $line] || [string trim $line] eq ""} { continue }
        lassign $line a b d bw
        lappend links [list $a $b $d $bw]
        if {$a > $maxnode} { set maxnode $a }
        if {$b > $maxnode} { set maxnode $b }
    }
    close $fh
    if {$source < 0 || [llength $receivers] == 0} {
        puts stderr "$who: $path has no '# source' or '# receivers' header"
        exit 2
    }
}

# install_drops PATH WHO MODEL: for each line `FROM TO SEQ ...` of PATH (`-`: none) a MODEL
# error model (SRMErrorModel, LMSErrorModel) on the link FROM -> TO dropping the data packet
# (packet type 2, PT_CBR: the protocol's original data, not its repairs) whose sequence number
# is SEQ: `drop-packet PKT_TYPE CYCLE OFFSET` drops those with seqno % CYCLE == OFFSET.
# Needs the globals ns and n (the nodes); appends each model to the global errmodels and
# returns how many it installed.
proc install_drops {path who model} {
    global ns n errmodels
    set count 0
    if {$path eq "-"} { return 0 }
    set dfh [open $path r]
    while {[gets $dfh line] >= 0} {
        if {[regexp {^\s*#} $line] || [string trim $line] eq ""} { continue }
        lassign $line dfrom dto dseq
        if {![info exists n($dfrom)] || ![info exists n($dto)]} {
            puts stderr "$who: $path: no node $dfrom or $dto: $line"
            exit 2
        }
        set em [new $model]
        $em drop-packet 2 1000000000 $dseq
        $em drop-target [$ns set nullAgent_]
        $ns lossmodel $em $n($dfrom) $n($dto)
        lappend errmodels $em
        incr count
    }
    close $dfh
    return $count
}
