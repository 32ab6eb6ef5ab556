//! The study's setup as reported.

use super::plan::Plan;
use super::{HOST_DELAY, TREE_DELAY};
use crate::study::Setup;
use core::time::Duration;
use rmcast_proto::{lms, pgm, srm};

/// `d` as the setup says it: whole seconds in s, otherwise ms.
fn span(d: Duration) -> String {
    if d >= Duration::from_secs(1) && d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_secs_f64() * 1e3)
    }
}

/// "every `d`", or "none" for a period that is off.
fn every(d: Option<Duration>) -> String {
    d.map_or("none".into(), |d| format!("every {}", span(d)))
}

/// The protocols' parameters as the runs use them (the spec's defaults, `pgm::Params` …).
fn protocols() -> Vec<(String, String)> {
    let s = srm::Params::default();
    let p = pgm::Params::default();
    let l = lms::Params::default();
    vec![
        (
            "SRM".into(),
            format!(
                "ns-2 defaults C1 = {}, C2 = {}, D1 = {}, D2 = {}, back-off limit {}, session \
                 messages {}, distances from session timestamps",
                s.c1,
                s.c2,
                s.d1,
                s.d2,
                s.backoff_limit,
                every(s.session_interval)
            ),
        ),
        (
            "PGM".into(),
            format!(
                "NAK back-off {} (the seed's runs), NAK repeat {}, NCF-to-RDATA wait {}, SPM \
                 {}, source repair delay {}; network elements on every router of the tree",
                span(p.nak_backoff),
                span(p.nak_repeat),
                span(p.nak_rdata),
                every(p.spm_interval),
                span(p.repair_delay)
            ),
        ),
        (
            "LMS".into(),
            format!(
                "{} repliers (downstream link to the closest receiver), request repeat {}, \
                 heartbeat {}; a replier leaves unanswered a first request (attempt 0) for a \
                 packet it received as a repair or already answered for the same turning point \
                 and interface (the authors' ns-2 LMS receiver), repeats are always answered",
                l.replier.word(),
                span(l.request_timeout),
                every(l.heartbeat)
            ),
        ),
        (
            "LMS adaptive repliers (beyond the seed)".into(),
            format!(
                "lms_adaptive runs: every {n} packets received each receiver sends a REFRESH \
                 with its cost, the losses it detected in those {n} packets (the authors' ns-2 \
                 LMS_REFRESH, whose loss sampling is off by default); a router remembers the \
                 last cost per downstream interface and keeps its replier link on the cheapest \
                 (ties: current link, then closer receiver, then lowest interface), passing a \
                 cost upstream when its replier refreshed or its link changed. lms_persist: the \
                 same runs with static repliers. Both lose 5 packets (31st … 71st) on the same \
                 site, as the SRM adaptive runs do; 'requests' of adaptive runs include REFRESH \
                 messages, and router state counts the remembered costs",
                n = l.refresh_packets
            ),
        ),
    ]
}

pub(super) fn setup(plan: &Plan, runs: usize) -> Setup {
    Setup {
        summary: "Seed 003's single-loss experiments re-run on rmcast's simulator: one source \
                  multicasting 1024-byte messages at 10 packets/s to receivers over 1.5 Mb/s \
                  links; exactly one original data packet (the 31st to cross the chosen link) \
                  is lost per run — at the source's link, at each receiver's link in turn, at \
                  each link of the multicast tree in turn, or (transit–stub) at each link of \
                  one class — and the run measures how the scheme recovers it."
            .into(),
        topology: format!(
            "Binary trees of height {:?} (routers inside, 2^h receiver hosts at the leaves, \
             the source host on a link above the root, every link 1.5 Mb/s and {} ms). Flat \
             random graphs: 100 routers, edge probability 0.1, GT-ITM-style plane (100 × 100, \
             delay 1 ms per unit of distance), redrawn until connected. Transit–stub: 1 \
             transit domain × 4 transit nodes × 3 stub domains of 8 nodes = 100 routers \
             (p_transit 0.6, p_stub 0.4). Source and receivers are hosts on 1.5 Mb/s, {} ms \
             links to routers chosen at random (stub routers only on transit–stub graphs). \
             {} topologies × {} placements per family.",
            plan.heights,
            TREE_DELAY.as_millis(),
            HOST_DELAY.as_millis(),
            plan.topologies,
            plan.placements
        ),
        parameters: [
            vec![("runs".into(), runs.to_string()),
            ("messages per run".into(), "40 (adaptive SRM: 80), one every 100 ms".into()),
            ("lost packet".into(), "the 31st original data packet crossing the site (t = 3.0 s)".into()),
            ("run length".into(), "9 s of simulated time (adaptive SRM: 13 s)".into())],
            protocols(),
            vec![(
                "beyond the seed".into(),
                format!(
                    "SRM with 100 receivers on the random graphs; transit–stub graphs of {:?} \
                     (nodes, receivers), GT-ITM parameters scaled: 1 transit domain, n/401 transit \
                     nodes (mean transit degree about 4), 50 stub domains of 8 nodes (p_stub 0.4) \
                     per transit node; {} evenly spread tree links per placement. SRM runs only \
                     where nodes × receivers ≤ 10^7 and receivers ≤ {} (topology distances cost \
                     one shortest-path computation per receiver, and every SRM request and repair \
                     reaches every member): on {:?}",
                    plan.large,
                    plan.large_sites,
                    plan.srm_large_max_receivers,
                    plan.large
                        .iter()
                        .filter(|&&(n, r)| plan.srm_large(n, r))
                        .collect::<Vec<_>>()
                ),
            ),
        ]]
        .concat(),
        choices: vec![
            ("Normalized latency: the receiver's RTT to the source".into(), "2 × the one-way propagation delay of its shortest path plus, per hop, the transmission time of a 40-byte request and a 1064-byte repair at the link's rate (the time a unicast request and repair take on an idle path)".into()),
            ("Min and max latency per point".into(), "the minimum and maximum over every receiver of every run of the point (the mean is the mean of per-run means, with its 95 % CI)".into()),
            ("Exposure".into(), "Fig. 5.1's total duplicates / receivers / drops, counting (as §5.4.2 and §5.8.1 do: 'exposure when loss is at the source is zero because all receivers lost the original packet') only repairs that reach receivers which did not miss the packet; 'dup_all' also counts extra repairs reaching receivers that did miss it".into()),
            ("Which link is 'the source'".into(), "the source host's link to its router (binary trees: above the root)".into()),
            ("Which links are 'each link'".into(), "every link of the source's shortest-path multicast tree, host links included (links off the tree never carry the data)".into()),
            ("Binary-tree link delay".into(), format!("{} ms (the seed gives delays only for GT-ITM graphs)", TREE_DELAY.as_millis())),
            ("Host links".into(), format!("{} ms, 1.5 Mb/s; receivers are separate hosts (the seed's 100 routers + 100 receivers = 200 nodes plus the source)", HOST_DELAY.as_millis())),
            ("Receiver placement".into(), "source and receivers each on a router drawn uniformly at random with replacement (several receivers may share a router; the source's router holds a receiver only by chance), a new draw per placement".into()),
            ("Loss time".into(), "the 31st packet (3 s in), so SRM's session messages have measured distances (two rounds) before the loss".into()),
            ("SRM adaptive runs".into(), "a single drop gives the adaptive algorithm nothing to adapt to; its runs lose 5 packets (the 31st, 41st, …, 71st) on the same link and report per drop".into()),
            ("Packets on the wire per drop".into(), "link hops of repair and control packets in the lossy run minus the control hops of the same placement and scheme without loss (same seed), per drop".into()),
            ("Router state".into(), "Σ over routers of the most entries held at once: PGM repair state per lost packet, LMS one replier link per group (fixed, not per drop), SRM none".into()),
            ("PGM repeated retransmissions".into(), "'retx' counts every RDATA the source sends per drop; 'repeated' those beyond the first".into()),
        ],
    }
}
