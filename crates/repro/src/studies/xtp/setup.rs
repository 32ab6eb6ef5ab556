//! The study's setup as reported.

use super::plan::Plan;
use crate::study::Setup;
use crate::sweep::join;

pub(super) fn setup(plan: &Plan, runs: usize, net: &crate::studies::xtp_net::NetSummary) -> Setup {
    Setup {
        summary: "Seed 002's Chapter IV grid — 50 KB and 1 MB messages sent in writes of 64–8192 B \
                  by unicast and by multicast to 1, 2 and 3 receivers, 0, 1/25, 1/10 or 1/5 of \
                  packets dropped at one receiver — re-run with rmcast's xtp agent in the \
                  simulator (10 Mb/s Ethernet bus plus a per-call cost model: `sim.*`), on \
                  this machine's loopback interface with real sockets (`net.*`) and on network-\
                  namespace hosts on a Linux bridge (`ns.*`). Three separate series: \
                  simulation, loopback, namespace hosts."
            .into(),
        topology: "sim: 1 sender + n receivers on rmcast_sim's seed-000 bus (10 Mb/s, CSMA/CD, \
                   64-byte minimum frame, 38 bytes of IP+Ethernet framing per datagram); net: \
                   one thread per endpoint on loopback (239.255.x.y multicast), loss \
                   injected on receive; ns: the sender and each receiver in its own network \
                   namespace (its own IP stack, a veth pair on one Linux bridge with IGMP \
                   snooping off, multicast crossing the bridge), one thread per endpoint, \
                   all on this machine's cores."
            .into(),
        parameters: vec![
            ("write sizes (sim)".into(), join(&plan.writes)),
            ("repetitions per cell (sim)".into(), plan.reps.to_string()),
            ("simulated runs".into(), runs.to_string()),
            ("real-network runs, loopback".into(), net.loopback_runs.to_string()),
            (
                "real-network runs, namespace hosts".into(),
                match &net.ns_skipped {
                    Some(why) => format!("skipped: {why}"),
                    None => format!(
                        "{} (up to {} receivers)",
                        net.ns_runs, net.ns_max_receivers
                    ),
                },
            ),
            ("receivers beyond the thesis (sim)".into(), join(&plan.scale_ns)),
            ("per-call cost".into(), "4.7 ms before each write reaches the protocol".into()),
            ("CTIMEOUT".into(), "60 s (SandiaXTP)".into()),
        ],
        choices: vec![
            ("per-call cost".into(), "4.7 ms, the thesis's Appendix's flat ms/call at 64–512 B (1 MB, no loss, every mode; digest §2.7.3), applied before each write; the call returns when every receiver holds the write (block on acknowledgment, -g)".into()),
            ("flags".into(), "FIRST with SREQ (-f), block on acknowledgment (-g), FASTNAK (-F), go-back-N, as the digest's common setup; the thesis confirms only -F".into()),
            ("WTIMER".into(), "base = max(100 ms, 2·SRTT), ×2 per expiry, reset only by a fresh RTT sample (an answer to a first transmission's SREQ); 100 ms from the Appendix's ≈0.1 s per lost 64-B write (1 MB 1:1 at 1/10: 245 s against 78 s)".into()),
            ("loss".into(), "Bernoulli on receive at receiver 1, data and control alike (the thesis does not say whether control packets were dropped)".into()),
            ("packet size".into(), "1448 data bytes (the thesis's maximum), window 64 packets, no rate control".into()),
            ("timing".into(), "from the sender's start (FIRST) to the last write's acknowledgment; failed (aborted) runs are left out of throughput means, as the thesis did".into()),
            ("improved setting".into(), "selective repeat, WTIMER back-off capped at 1 s, an SREQ every 8 packets; CTIMEOUT unchanged at 60 s".into()),
        ],
    }
}
