//! Measures built from the experiments' series and the observations for the report.

use super::METRICS;
use crate::Measures;

/// Measures built from others: LMS latency against receiver count (Fig. 5.12, 5.13), the
/// Table 5.1 ratios.
pub(super) fn derived(m: &mut Measures) {
    for metric in ["lat_mean", "exposure"] {
        let mut pts = Vec::new();
        for (r, key) in [
            (5.0, "lms.rand_r5.links"),
            (20.0, "lms.rand_r20.links"),
            (100.0, "lms.rand.links"),
        ] {
            if let Some(e) = m
                .get(&format!("{key}.all.{metric}"))
                .and_then(|x| x.at(None))
            {
                pts.push((r, e));
            }
        }
        let unit = if metric == "exposure" {
            "fraction"
        } else {
            "RTT"
        };
        m.series(format!("lms.rand_by_r.{metric}"), unit, "receivers", pts);
    }
    // Per scheme on random graphs, by loss location (x: 1 source, 2 each receiver, 3 each
    // link), to set beside the seed's statements (paper tables of the same shape).
    for key in ["lms.rand", "pgm.rand", "srm.rand", "srm_adaptive.rand"] {
        for metric in [
            "lat_mean", "lat_min", "lat_max", "requests", "repairs", "exposure",
        ] {
            let mut pts = Vec::new();
            for (x, loc) in [(1.0, "src"), (2.0, "rcv"), (3.0, "links")] {
                if let Some(e) = m
                    .get(&format!("{key}.{loc}.all.{metric}"))
                    .and_then(|v| v.at(None))
                {
                    pts.push((x, e));
                }
            }
            if !pts.is_empty() {
                let unit = METRICS
                    .iter()
                    .find(|(n, _)| *n == metric)
                    .map_or("", |(_, u)| u);
                m.series(
                    format!("{key}.by_loc.{metric}"),
                    unit,
                    "loss location (1 source, 2 receivers, 3 links)",
                    pts,
                );
            }
        }
    }
    // Ratios carry both spreads (`Estimate::over`).
    let g = |m: &Measures, k: &str| m.get(k).and_then(|x| x.at(None));
    // PGM repeated retransmissions: loss at all links relative to loss at the source.
    if let (Some(a), Some(b)) = (
        g(m, "pgm.rand.src.all.repeated"),
        g(m, "pgm.rand.links.all.repeated"),
    ) {
        if let Some(r) = b.over(&a).filter(|_| a.mean > 0.0) {
            m.scalar("pgm.rand.repeated_links_over_src", "ratio", r);
        }
    }
    // Latency ratios between schemes, loss at each link of the random graphs.
    let lms = g(m, "lms.rand.links.all.lat_mean");
    for (name, other) in [
        ("pgm", "pgm.rand.links.all.lat_mean"),
        ("srm", "srm.rand.links.all.lat_mean"),
    ] {
        if let (Some(l), Some(o)) = (lms, g(m, other)) {
            if let Some(r) = o.over(&l).filter(|_| l.mean > 0.0) {
                m.scalar(format!("ratio.{name}_over_lms.links"), "ratio", r);
            }
        }
    }
}

/// Remarks built from the measures (what the report should say beside the claims).
pub(super) fn observations(m: &Measures) -> Vec<String> {
    let g = |k: &str| m.get(k).and_then(|x| x.at(None));
    let f = |k: &str| {
        g(k).map_or("n/a".to_string(), |e| {
            format!("{:.3} (n = {})", e.mean, e.n)
        })
    };
    vec![
        format!(
            "PGM repeated retransmissions (loss at the source, random graphs, 100 receivers): \
             {} RDATA per drop with link delays of 1 ms per unit of GT-ITM edge length (the \
             study's setting, ns-2's converter convention), {} with 100 µs per unit \
             (pgm_fast). A NAK repeats the retransmission when it reaches a router after the \
             RDATA answering a nearer receiver has cleared the state; with short propagation \
             delays the 5.5 ms transmission time of a 1024-byte packet at 1.5 Mb/s dominates \
             and the NAKs of distant receivers arrive before the RDATA comes back, so fewer \
             repeats.",
            f("pgm.rand.src.all.retx"),
            f("pgm_fast.rand.src.all.retx")
        ),
        format!(
            "LMS host-link sensitivity (random graphs, 100 receivers; the seed does not give \
             the delay of the links joining its 100 receivers and the source to the graph): \
             with rmcast's 1 ms host links the mean normalized latency is {} (loss at the \
             source), {} (each receiver) and {} (each link), the largest {} with loss at a \
             receiver; with every host link as long as its graph's mean link (lms_longhost) \
             {}, {} and {}, the largest {}. A short host link makes a receiver on the source's \
             router, or on a turning point's, a near-free replier; a long one puts at least one \
             long host link between every turning point and its replier.",
            f("lms.rand.src.all.lat_mean"),
            f("lms.rand.rcv.all.lat_mean"),
            f("lms.rand.links.all.lat_mean"),
            f("lms.rand.rcv.all.lat_max"),
            f("lms_longhost.rand.src.all.lat_mean"),
            f("lms_longhost.rand.rcv.all.lat_mean"),
            f("lms_longhost.rand.links.all.lat_mean"),
            f("lms_longhost.rand.rcv.all.lat_max"),
        ),
        format!(
            "LMS with loss at the source: {} repairs per drop (source and repliers) and {} \
             duplicates per receiver (dup_all), none at receivers that did not miss the packet \
             (exposure {}). One request climbs replier links to the source, whose multicast \
             repairs everyone; the other requests turn below it and reach repliers that still \
             lack the packet or got it from that repair, and a replier leaves such first \
             requests unanswered (the rule of the authors' ns-2 LMS receiver). Without that rule \
             nearly every replier answered one DREQ after the source's repair had passed (about \
             one redundant repair per receiver, exposure still 0).",
            f("lms.rand.src.all.repairs"),
            f("lms.rand.src.all.dup_all"),
            f("lms.rand.src.all.exposure")
        ),
        format!(
            "LMS repliers, static against adaptive (beyond the seed; the seed ran static \
             repliers only, §5.8): the loss stays on its link for 5 drops 1 s apart; adaptive \
             receivers report their losses every 10 packets and routers move their replier link \
             to the cheapest interface. Random graphs, loss at each receiver: exposure {} static, \
             {} adaptive; mean latency {} static, {} adaptive. Loss at each link: exposure {} \
             static, {} adaptive; mean latency {} static, {} adaptive. Transit–stub, loss at each \
             link: exposure {} static, {} adaptive; mean latency {} static, {} adaptive.",
            f("lms_persist.rand.rcv.all.exposure"),
            f("lms_adaptive.rand.rcv.all.exposure"),
            f("lms_persist.rand.rcv.all.lat_mean"),
            f("lms_adaptive.rand.rcv.all.lat_mean"),
            f("lms_persist.rand.links.all.exposure"),
            f("lms_adaptive.rand.links.all.exposure"),
            f("lms_persist.rand.links.all.lat_mean"),
            f("lms_adaptive.rand.links.all.lat_mean"),
            f("lms_persist.ts.links.all.exposure"),
            f("lms_adaptive.ts.links.all.exposure"),
            f("lms_persist.ts.links.all.lat_mean"),
            f("lms_adaptive.ts.links.all.lat_mean"),
        ),
        format!(
            "SRM with 100 receivers (beyond the seed): with distances from the topology and no \
             session messages, mean latency {} RTT and {} repairs per drop (loss at each link); \
             with ns-2's session messages every 1 s, every member's message lists all 101 \
             members, and the session traffic alone nears the 1.5 Mb/s link rate: mean latency \
             {} RTT, {} of the losses unrecovered at the end of the run.",
            f("srm.rand_r100.links.all.lat_mean"),
            f("srm.rand_r100.links.all.repairs"),
            f("srm_sessions.rand_r100.links.all.lat_mean"),
            f("srm_sessions.rand_r100.links.all.unrecovered")
        ),
    ]
}

/// The routing note: which metric the claims' runs used, how often fewest-hop routes rest on
/// their tie rule, and the delay-route variant's measures beside the claims' own.
pub(super) fn routes_note(m: &Measures, hop_routes: bool) -> String {
    let g = |k: &str| m.get(k).and_then(|x| x.at(None));
    let f = |k: &str| {
        g(k).map_or("n/a".to_string(), |e| {
            if e.n > 1 {
                format!("{:.3} ± {:.3}", e.mean, e.half_width())
            } else {
                format!("{:.3}", e.mean)
            }
        })
    };
    let pct = |k: &str| g(k).map_or("n/a".to_string(), |e| format!("{:.1} %", 100.0 * e.mean));
    let metric = if hop_routes {
        "fewest hops (seed 003's simulator, ns-2, routes by hop count unless link costs are \
         set), ties by least delay, then the lowest-numbered parent node"
    } else {
        "least delay (`hop_routes` = 0)"
    };
    let pairs: [(&str, &str, &str); 6] = [
        (
            "SRM repairs per loss, loss at each receiver",
            "srm",
            "rcv.all.repairs",
        ),
        (
            "SRM repairs per loss, loss at each link",
            "srm",
            "links.all.repairs",
        ),
        (
            "LMS exposure, loss at each receiver",
            "lms",
            "rcv.all.exposure",
        ),
        (
            "LMS exposure, loss at each link",
            "lms",
            "links.all.exposure",
        ),
        (
            "LMS mean latency (RTT), loss at each link",
            "lms",
            "links.all.lat_mean",
        ),
        (
            "PGM RDATA per drop, loss at the source",
            "pgm",
            "src.all.retx",
        ),
    ];
    let variant: Vec<String> = pairs
        .iter()
        .map(|(what, s, k)| {
            format!(
                "{what}: {} on the study's routes, {} on least-delay routes",
                f(&format!("{s}.rand.{k}")),
                f(&format!("{s}_delay.rand.{k}"))
            )
        })
        .collect();
    format!(
        "Routes: unicast and the source's multicast tree by {metric}. On the random graphs \
         {} of the receivers (100 receivers; {} with 20) have more than one fewest-hop path \
         to the source, so their hop route rests on the tie rule (ns-2 takes the path its \
         own route computation meets first, by node number, on the seed's graphs, which are \
         not available); {} ({} with 20) route differently from least-delay routes. \
         Least-delay routes as a named variant (the same placements and run seeds, a sample \
         of loss sites per placement; not the claims' basis): {}.",
        pct("routes.rand.hop_ties"),
        pct("routes.rand_r20.hop_ties"),
        pct("routes.rand.differ_from_delay"),
        pct("routes.rand_r20.differ_from_delay"),
        variant.join("; ")
    )
}
