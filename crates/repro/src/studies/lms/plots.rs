//! Figures 5.4–5.30 as plots, and the beyond-the-seed comparisons.

use crate::plot::{Axis, Plot, PlotSeries};
use crate::study::{RunCtx, StudyError};
use crate::Measures;

/// One latency plot (min, mean, max) of an experiment.
pub(super) fn lat_plot(m: &Measures, id: &str, title: &str, key: &str, x: &str) -> Plot {
    Plot {
        id: format!("lms-{id}"),
        title: title.into(),
        caption: format!(
            "Normalized recovery latency (detection to repair over the receiver's RTT to the \
             source) of every receiver that missed the packet: mean across runs with 95 % CI, \
             and the minimum and maximum over all runs ({key})."
        ),
        x: Axis::new(x, "index"),
        y: Axis::new("normalized recovery latency", "RTT"),
        series: vec![
            PlotSeries::measured("mean", 0, &m.points(&format!("{key}.lat_mean"))),
            PlotSeries::measured("min", 1, &m.points(&format!("{key}.lat_min"))),
            PlotSeries::measured("max", 2, &m.points(&format!("{key}.lat_max"))),
        ],
    }
}

/// One plot of a metric across several experiments.
pub(super) fn metric_plot(
    m: &Measures,
    id: &str,
    title: &str,
    caption: &str,
    x: (&str, &str),
    y: (&str, &str),
    series: &[(&str, String)],
) -> Plot {
    Plot {
        id: format!("lms-{id}"),
        title: title.into(),
        caption: caption.into(),
        x: Axis::new(x.0, x.1),
        y: Axis::new(y.0, y.1),
        series: series
            .iter()
            .enumerate()
            .map(|(i, (label, name))| PlotSeries::measured(*label, i, &m.points(name)))
            .collect(),
    }
}

pub(super) fn plots(m: &Measures, ctx: &RunCtx<'_>) -> Result<Vec<Plot>, StudyError> {
    let mut v = Vec::new();
    let topo = "topology";
    for (fig, loss, what) in [
        ("5.4", "src", "loss at the source"),
        ("5.5", "rcv", "loss at each receiver"),
        ("5.6", "links", "loss at each link"),
    ] {
        v.push(lat_plot(
            m,
            &format!("fig{}", fig.replace('.', "_")),
            &format!("Fig. {fig}: LMS latency, binary trees, {what}"),
            &format!("lms.bt.{loss}"),
            "tree height",
        ));
    }
    v.push(metric_plot(
        m,
        "fig5_7",
        "Fig. 5.7: LMS exposure, binary trees",
        "Duplicates per receiver per drop (static repliers), mean across runs with 95 % CI.",
        ("tree height", "levels"),
        ("exposure", "fraction"),
        &[
            ("loss at the source", "lms.bt.src.exposure".into()),
            ("loss at each receiver", "lms.bt.rcv.exposure".into()),
            ("loss at each link", "lms.bt.links.exposure".into()),
        ],
    ));
    for (fig, loss, what) in [
        ("5.8", "src", "loss at the source"),
        ("5.9", "rcv", "loss at each receiver"),
        ("5.10", "links", "loss at each link"),
    ] {
        v.push(lat_plot(
            m,
            &format!("fig{}", fig.replace('.', "_")),
            &format!("Fig. {fig}: LMS latency, random graphs R100-100, {what}"),
            &format!("lms.rand.{loss}"),
            topo,
        ));
    }
    v.push(metric_plot(
        m,
        "fig5_11",
        "Fig. 5.11: LMS exposure, random graphs R100-100",
        "Duplicates per receiver per drop, per topology (mean over its placements and loss sites).",
        (topo, "index"),
        ("exposure", "fraction"),
        &[
            ("loss at the source", "lms.rand.src.exposure".into()),
            ("loss at each receiver", "lms.rand.rcv.exposure".into()),
            ("loss at each link", "lms.rand.links.exposure".into()),
        ],
    ));
    v.push(metric_plot(
        m,
        "fig5_12",
        "Fig. 5.12: LMS latency, random graphs, 5, 20 and 100 receivers",
        "Mean normalized recovery latency with loss at each link, over all topologies.",
        ("receivers", "count"),
        ("normalized recovery latency", "RTT"),
        &[("mean", "lms.rand_by_r.lat_mean".into())],
    ));
    v.push(metric_plot(
        m,
        "fig5_13",
        "Fig. 5.13: LMS exposure, random graphs, 5, 20 and 100 receivers",
        "Exposure with loss at each link, over all topologies.",
        ("receivers", "count"),
        ("exposure", "fraction"),
        &[("exposure", "lms.rand_by_r.exposure".into())],
    ));
    for (fig, loss, what) in [
        ("5.14", "tt", "loss at transit–transit links"),
        ("5.15", "ts", "loss at transit–stub links"),
        ("5.16", "ss", "loss at stub–stub links"),
        ("5.17", "links", "loss at all links"),
    ] {
        v.push(lat_plot(
            m,
            &format!("fig{}", fig.replace('.', "_")),
            &format!("Fig. {fig}: LMS latency, transit–stub ts100-100, {what}"),
            &format!("lms.ts.{loss}"),
            topo,
        ));
    }
    v.push(metric_plot(
        m,
        "fig5_18",
        "Fig. 5.18: LMS exposure, transit–stub ts100-100",
        "Duplicates per receiver per drop by lossy link class, per topology.",
        (topo, "index"),
        ("exposure", "fraction"),
        &[
            ("transit–transit", "lms.ts.tt.exposure".into()),
            ("transit–stub", "lms.ts.ts.exposure".into()),
            ("stub–stub", "lms.ts.ss.exposure".into()),
            ("all links", "lms.ts.links.exposure".into()),
        ],
    ));
    for (fig, loss, what) in [
        ("5.19", "src", "loss at the source"),
        ("5.20", "rcv", "loss at each receiver"),
        ("5.21", "links", "loss at each link"),
    ] {
        v.push(lat_plot(
            m,
            &format!("fig{}", fig.replace('.', "_")),
            &format!("Fig. {fig}: SRM latency, random graphs, 20 receivers, {what}"),
            &format!("srm.rand.{loss}"),
            topo,
        ));
    }
    for (fig, metric, what) in [
        ("5.22", "requests", "requests"),
        ("5.23", "repairs", "replies"),
    ] {
        v.push(metric_plot(
            m,
            &format!("fig{}", fig.replace('.', "_")),
            &format!("Fig. {fig}: SRM {what} per drop, random graphs, 20 receivers"),
            &format!("SRM {what} sent by all members per drop, per topology."),
            (topo, "index"),
            (what, "per drop"),
            &[
                ("loss at the source", format!("srm.rand.src.{metric}")),
                ("loss at each receiver", format!("srm.rand.rcv.{metric}")),
                ("loss at each link", format!("srm.rand.links.{metric}")),
            ],
        ));
    }
    v.push(metric_plot(
        m,
        "fig5_24",
        "Fig. 5.24: SRM requests and replies per drop, adaptive timers",
        "Agent/SRM/Adaptive, 20 receivers, 5 drops per run on the same link.",
        (topo, "index"),
        ("messages", "per drop"),
        &[
            (
                "requests, loss at the source",
                "srm_adaptive.rand.src.requests".into(),
            ),
            (
                "replies, loss at the source",
                "srm_adaptive.rand.src.repairs".into(),
            ),
            (
                "requests, loss at each link",
                "srm_adaptive.rand.links.requests".into(),
            ),
            (
                "replies, loss at each link",
                "srm_adaptive.rand.links.repairs".into(),
            ),
        ],
    ));
    v.push(lat_plot(
        m,
        "fig5_25",
        "Fig. 5.25: SRM latency, adaptive timers, loss at each link",
        "srm_adaptive.rand.links",
        topo,
    ));
    for (fig, loss, what) in [
        ("5.26", "src", "loss at the source"),
        ("5.27", "rcv", "loss at each receiver"),
        ("5.28", "links", "loss at each link"),
    ] {
        v.push(lat_plot(
            m,
            &format!("fig{}", fig.replace('.', "_")),
            &format!("Fig. {fig}: PGM latency, random graphs R100-100, {what}"),
            &format!("pgm.rand.{loss}"),
            topo,
        ));
    }
    for (fig, loss, what) in [
        ("5.29", "src", "loss at the source"),
        ("5.30", "links", "loss at each link"),
    ] {
        v.push(metric_plot(
            m,
            &format!("fig{}", fig.replace('.', "_")),
            &format!("Fig. {fig}: PGM retransmissions per drop, {what}"),
            "RDATA sent by the source per drop (all) and beyond the first (repeated), per topology.",
            (topo, "index"),
            ("retransmissions", "per drop"),
            &[
                ("all", format!("pgm.rand.{loss}.retx")),
                ("repeated", format!("pgm.rand.{loss}.repeated")),
            ],
        ));
    }
    v.push(metric_plot(
        m,
        "wire",
        "Packets on the wire per drop (all schemes, random graphs, loss at each link)",
        "Link hops of repair and control packets per drop, minus the control hops of the same \
         placement without loss (SRM session messages, PGM SPMs, LMS heartbeats).",
        (topo, "index"),
        ("link hops", "per drop"),
        &[
            ("LMS, 100 receivers", "lms.rand.links.wire".into()),
            ("PGM, 100 receivers", "pgm.rand.links.wire".into()),
            ("SRM, 20 receivers", "srm.rand.links.wire".into()),
            ("SRM, 100 receivers", "srm.rand_r100.links.wire".into()),
        ],
    ));
    v.push(metric_plot(
        m,
        "srm100",
        "Beyond the seed: SRM with 100 receivers, random graphs",
        "Mean normalized latency and requests/replies per drop with 100 receivers (the seed \
         stopped at 20).",
        (topo, "index"),
        ("value", "RTT or per drop"),
        &[
            (
                "latency, loss at each link",
                "srm.rand_r100.links.lat_mean".into(),
            ),
            (
                "requests, loss at each link",
                "srm.rand_r100.links.requests".into(),
            ),
            (
                "replies, loss at each link",
                "srm.rand_r100.links.repairs".into(),
            ),
            (
                "latency, loss at the source",
                "srm.rand_r100.src.lat_mean".into(),
            ),
        ],
    ));
    for tag in ["ts10k", "ts100k"] {
        if m.get(&format!("beyond.{tag}.lms.links.lat_mean")).is_none() {
            continue;
        }
        let n = if tag == "ts10k" { "10,000" } else { "100,000" };
        for (metric, ylab, unit) in [
            ("lat_mean", "normalized recovery latency", "RTT"),
            ("exposure", "duplicates per receiver", "per drop"),
            ("state", "router state", "entries"),
        ] {
            let mut s = Vec::new();
            for scheme in ["lms", "pgm", "srm"] {
                for loss in ["src", "links"] {
                    let name = format!("beyond.{tag}.{scheme}.{loss}.{metric}");
                    if m.get(&name).is_some() {
                        s.push((
                            format!(
                                "{} loss at {}",
                                scheme.to_uppercase(),
                                if loss == "src" {
                                    "the source"
                                } else {
                                    "each link"
                                }
                            ),
                            name,
                        ));
                    }
                }
            }
            let series: Vec<(&str, String)> =
                s.iter().map(|(a, b)| (a.as_str(), b.clone())).collect();
            v.push(metric_plot(
                m,
                &format!("beyond-{tag}-{metric}"),
                &format!("Beyond the seed: {n}-node transit–stub graph, {ylab}"),
                "One placement per receiver count; loss at the source and at evenly spread tree \
                 links. SRM uses topology distances and no session messages here.",
                ("receivers", "count"),
                (ylab, unit),
                &series,
            ));
        }
    }
    // The seed's statements beside rmcast's means, random graphs, by loss location.
    let paper =
        |name: &str| -> Vec<(f64, f64)> { ctx.paper(name).map(|t| t.points()).unwrap_or_default() };
    let mut summary = vec![
        PlotSeries::measured("LMS mean", 0, &m.points("lms.rand.by_loc.lat_mean")),
        PlotSeries::measured("PGM mean", 1, &m.points("pgm.rand.by_loc.lat_mean")),
        PlotSeries::measured("SRM mean", 2, &m.points("srm.rand.by_loc.lat_mean")),
        PlotSeries::measured("LMS max", 3, &m.points("lms.rand.by_loc.lat_max")),
        PlotSeries::measured("SRM max", 4, &m.points("srm.rand.by_loc.lat_max")),
    ];
    summary.extend([
        PlotSeries::paper("seed: LMS mean", 0, &paper("lms_rand_lat_mean")),
        PlotSeries::paper("seed: PGM mean", 1, &paper("pgm_rand_lat_mean")),
        PlotSeries::paper("seed: SRM mean", 2, &paper("srm_rand_lat_mean")),
        PlotSeries::paper("seed: LMS max", 3, &paper("lms_rand_lat_max")),
        PlotSeries::paper("seed: SRM max", 4, &paper("srm_rand_lat_max")),
    ]);
    v.push(Plot {
        id: "lms-summary-latency".into(),
        title: "Random graphs: normalized recovery latency by loss location, rmcast and the seed"
            .into(),
        caption: "x: 1 loss at the source, 2 at each receiver, 3 at each link. Curves: rmcast                   (mean across runs with 95 % CI; max over all runs). Diamonds: the values the                   seed states in §5.8.2, §5.9 and §5.10 (LMS and PGM 100 receivers, SRM 20)."
            .into(),
        x: Axis::new("loss location", "1 source, 2 receivers, 3 links"),
        y: Axis::new("normalized recovery latency", "RTT"),
        series: summary,
    });
    // Drop empty plots (a measure missing in this mode) rather than render nothing.
    v.retain(|p| p.series.iter().any(|s| !s.points.is_empty()));
    for p in &v {
        p.check()?;
    }
    Ok(v)
}
