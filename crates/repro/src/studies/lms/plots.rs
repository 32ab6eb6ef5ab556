//! Figures 5.4–5.30 as plots, and the beyond-the-seed comparisons.

use crate::plot::{Axis, Plot, PlotSeries};
use crate::plot_spec::{PlotSpec, SeriesSpec};
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

/// Loss at the source, at each receiver, at each link: (measure key, words).
const SITES: &[(&str, &str)] = &[
    ("src", "loss at the source"),
    ("rcv", "loss at each receiver"),
    ("links", "loss at each link"),
];

/// Loss by link class on the transit–stub graphs.
const TS_SITES: &[(&str, &str)] = &[
    ("tt", "loss at transit–transit links"),
    ("ts", "loss at transit–stub links"),
    ("ss", "loss at stub–stub links"),
    ("links", "loss at all links"),
];

/// The latency figures: (number of the first in chapter 5, what they show, measure prefix,
/// x axis, loss sites); one figure per site, numbered on.
type LatencyFigs<'a> = (u32, &'a str, &'a str, &'a str, &'a [(&'a str, &'a str)]);
const LATENCY: &[LatencyFigs] = &[
    (
        4,
        "LMS latency, binary trees",
        "lms.bt",
        "tree height",
        SITES,
    ),
    (
        8,
        "LMS latency, random graphs R100-100",
        "lms.rand",
        "topology",
        SITES,
    ),
    (
        14,
        "LMS latency, transit–stub ts100-100",
        "lms.ts",
        "topology",
        TS_SITES,
    ),
    (
        19,
        "SRM latency, random graphs, 20 receivers",
        "srm.rand",
        "topology",
        SITES,
    ),
    (
        25,
        "SRM latency, adaptive timers",
        "srm_adaptive.rand",
        "topology",
        &[(
            "moving",
            "loss moving to the next tree link after every drop",
        )],
    ),
    (
        26,
        "PGM latency, random graphs R100-100",
        "pgm.rand",
        "topology",
        SITES,
    ),
];

/// The figures besides the latency ones, declared as data.
const PLOTS_TOML: &str = include_str!("../../../../../scenarios/repro/lms/plots.toml");

pub(super) fn plots(m: &Measures, ctx: &RunCtx<'_>) -> Result<Vec<Plot>, StudyError> {
    // Figures 5.4–5.30 in their order, then the unnumbered ones in the file's order.
    let mut numbered: Vec<(u32, Plot)> = Vec::new();
    for &(first, what, prefix, x, sites) in LATENCY {
        for (n, (site, words)) in (first..).zip(sites) {
            let id = format!("fig5_{n}");
            let title = format!("Fig. 5.{n}: {what}, {words}");
            numbered.push((n, lat_plot(m, &id, &title, &format!("{prefix}.{site}"), x)));
        }
    }
    for spec in PlotSpec::parse_all("scenarios/repro/lms/plots.toml", PLOTS_TOML)? {
        let n = spec
            .id
            .strip_prefix("lms-fig5_")
            .and_then(|n| n.parse().ok());
        numbered.push((n.unwrap_or(u32::MAX), spec.plot(m, ctx)?));
    }
    numbered.sort_by_key(|(n, _)| *n);
    let mut v: Vec<Plot> = numbered.into_iter().map(|(_, p)| p).collect();
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
            let mut series = Vec::new();
            for scheme in ["lms", "pgm", "srm"] {
                for (loss, at) in [("src", "the source"), ("links", "each link")] {
                    let name = format!("beyond.{tag}.{scheme}.{loss}.{metric}");
                    if m.get(&name).is_some() {
                        let label = format!("{} loss at {at}", scheme.to_uppercase());
                        series.push(SeriesSpec::measured(label, name));
                    }
                }
            }
            let spec = PlotSpec {
                id: format!("lms-beyond-{tag}-{metric}"),
                title: format!("Beyond the seed: {n}-node transit–stub graph, {ylab}"),
                caption: "One placement per receiver count; loss at the source and at evenly \
                          spread tree links. SRM uses topology distances and no session \
                          messages here."
                    .into(),
                x: ("receivers".into(), "count".into()),
                y: (ylab.into(), unit.into()),
                series,
            };
            v.push(spec.plot(m, ctx)?);
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
    Ok(v)
}
