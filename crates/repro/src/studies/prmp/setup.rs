//! The study's setup as reported.

use super::plan::Plan;
use super::run::{PACKETS, PACKET_BYTES};
use crate::study::Setup;

pub(super) fn setup(plan: &Plan, runs: usize) -> Setup {
    Setup {
        summary: format!(
            "{runs} simulations: PF, PF-IW, FF, FF-IW and FF-IW-IT on the LAN and HYBRID stars \
             of §4 ({} and {} group sizes), the RR sweep of Figures 10–11 at NC = 60, and \
             beyond the paper PF, PF-IW, FF and FF-IW-IT with {} children.",
            plan.lan.len(),
            plan.hybrid.len(),
            plan
                .scale
                .iter()
                .map(|x| crate::claim::fmt_num(*x))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        topology: "A star: the parent in the middle, each child on its own link of a Table 1 class \
                   (LAN: L = 1.5 ms, SD 0.08 ms, Err 1 %; INTERLAN: 5 ms, 0.5 ms, 1 %; WAN: 75 ms, \
                   15 ms, 10 %); HYBRID assigns LAN, INTERLAN, WAN in turn (NC/3 of each for the \
                   multiples of 3 used). One-way latency Normal(L, SD) per packet, clamped at 0, \
                   FIFO per direction; no bandwidth limit."
            .into(),
        parameters: vec![
            ("DP".into(), format!("{PACKETS} packets of {PACKET_BYTES} bytes")),
            ("IPG".into(), "1 ms".into()),
            ("S".into(), "64 (PF, FF); 1000 = all packets (PF-IW, FF-IW, FF-IW-IT)".into()),
            ("ε".into(), "10 ms".into()),
            ("RR".into(), "1500/s = ITR (swept in Figs. 10–11)".into()),
            ("MTR".into(), "20 %".into()),
            ("implosion".into(), "16-packet response buffer at the parent served at 1500/s; none for FF-IW-IT".into()),
            ("Err".into(), "independent Bernoulli per packet per link direction, every packet kind".into()),
            ("runs per point".into(), plan.seeds.to_string()),
        ],
        choices: vec![
            ("bandwidth".into(), "unlimited: §4 models links by latency and error only".into()),
            ("L".into(), "one-way latency (RTT ≈ 2L)".into()),
            ("N's TP".into(), "every packet crossing a parent–child link, a multicast counted once per child and lost copies included; so the ideal N is (DP+1)/DP (§4 prints DP/(DP+1), read as the same one-ack-per-child ideal)".into()),
            ("RTT before the first response".into(), "100 ms, RTO floor 1 ms (both protocols)".into()),
            ("silent polls before removal".into(), "10".into()),
            ("FF-IW-IT".into(), "the FF-IW agent with the parent's response buffer removed".into()),
            ("HYBRID group sizes".into(), "multiples of 3 so every class has exactly NC/3 children".into()),
            ("scale runs".into(), "LAN star, 600 simulated seconds at most".into()),
        ],
    }
}
