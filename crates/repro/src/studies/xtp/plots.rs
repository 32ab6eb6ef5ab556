//! Figures 6–9 and the beyond-the-thesis plots.

use super::super::xtp_grid::*;
use super::key;
use crate::plot::{Axis, Plot, PlotSeries};
use crate::stats::Estimate;
use crate::study::{RunCtx, StudyError};
use crate::Measures;

/// The measured series and the thesis's tables a figure draws from, with x as log2 of the
/// write size.
struct Sources<'a> {
    ctx: &'a RunCtx<'a>,
    m: &'a Measures,
}

impl Sources<'_> {
    /// A recorded series, x as log2 bytes.
    fn series_of(&self, name: &str) -> Vec<(f64, Estimate)> {
        self.m
            .points(name)
            .into_iter()
            .map(|(x, e)| (x.log2(), e))
            .collect()
    }

    /// A table of the thesis, x as log2 bytes (empty when the claims file has none).
    fn paper(&self, name: &str) -> Vec<(f64, f64)> {
        self.ctx
            .paper(name)
            .map(|t| t.points().into_iter().map(|(x, y)| (x.log2(), y)).collect())
            .unwrap_or_default()
    }
}

/// The write-size axis, log2 bytes.
fn write_axis() -> Axis {
    Axis::new("write size, log2 bytes (6 = 64 B, 13 = 8192 B)", "log2 B")
}

/// The throughput axis.
fn mbps_axis() -> Axis {
    Axis::new("throughput", "Mbit/s")
}

/// A loss level's legend text.
fn loss_label(l: u32) -> String {
    match l {
        0 => "no induced errors".to_string(),
        4 => "1 of 25 dropped".to_string(),
        10 => "1 of 10 dropped".to_string(),
        _ => "1 of 5 dropped".to_string(),
    }
}

/// Every figure of the study, in report order.
pub(super) fn plots(ctx: &RunCtx<'_>, m: &Measures) -> Result<Vec<Plot>, StudyError> {
    let g = Sources { ctx, m };
    let mut out = thesis_figures(&g);
    out.push(improved_vs_thesis(&g));
    out.extend(receivers(m));
    out.extend(places(&g));
    out.extend(ns_receivers(m));
    Ok(out)
}

/// Figures 4.1–4.16: by loss the four methods, then by method the four loss levels.
fn thesis_figures(g: &Sources<'_>) -> Vec<Plot> {
    let mut out = Vec::new();
    // Figures 4.1-4.8: by loss, the four methods.
    let mut fig = 1;
    for &msg in &MESSAGES {
        for &(l, _) in &LOSSES {
            let mut series = Vec::new();
            for (i, &md) in MODES.iter().enumerate() {
                let k = key(Setting::Thesis, msg, md, l);
                series.push(PlotSeries::measured(
                    format!("rmcast sim, {}", md.label()),
                    i,
                    &g.series_of(&format!("{k}.mbps")),
                ));
                let p = g.paper(&format!("mbps_{}_l{}_{}", msg_key(msg), l, md.key()));
                if !p.is_empty() {
                    series.push(PlotSeries::paper(format!("thesis, {}", md.label()), i, &p));
                }
            }
            out.push(Plot {
                id: format!("xtp-fig4_{fig}"),
                title: format!("Figure 4.{fig}: {} message, {}", if msg < 100_000 { "50 KB" } else { "1 MB" }, loss_label(l)),
                caption: "Throughput against write size; lines: rmcast's simulation (thesis setting: go-back-N, uncapped WTIMER back-off, 4.7 ms per call, 4-ms WTIMER floor, 10 Mb/s bus), points: the thesis's table (failed cells absent).".into(),
                x: write_axis(),
                y: mbps_axis(),
                series,
            });
            fig += 1;
        }
    }
    // Figures 4.9-4.16: by method, the four loss levels.
    for &msg in &MESSAGES {
        for &md in &MODES {
            let mut series = Vec::new();
            for (i, &(l, _)) in LOSSES.iter().enumerate() {
                let k = key(Setting::Thesis, msg, md, l);
                series.push(PlotSeries::measured(
                    format!("rmcast sim, {}", loss_label(l)),
                    i,
                    &g.series_of(&format!("{k}.mbps")),
                ));
                let p = g.paper(&format!("mbps_{}_l{}_{}", msg_key(msg), l, md.key()));
                if !p.is_empty() {
                    series.push(PlotSeries::paper(
                        format!("thesis, {}", loss_label(l)),
                        i,
                        &p,
                    ));
                }
            }
            out.push(Plot {
                id: format!("xtp-fig4_{fig}"),
                title: format!("Figure 4.{fig}: {} message, {}", if msg < 100_000 { "50 KB" } else { "1 MB" }, md.label()),
                caption: "Throughput against write size for the four loss levels at one receiver; lines: rmcast's simulation (thesis setting), points: the thesis's table.".into(),
                x: write_axis(),
                y: mbps_axis(),
                series,
            });
            fig += 1;
        }
    }
    out
}

/// Thesis setting against the recommendations, 1 MB, 1:3, every loss level.
fn improved_vs_thesis(g: &Sources<'_>) -> Plot {
    let mut series = Vec::new();
    for (i, &(l, _)) in LOSSES.iter().enumerate() {
        for (s, tag) in [(Setting::Thesis, "thesis"), (Setting::Improved, "improved")] {
            let pts = g.series_of(&format!("{}.mbps", key(s, 1_024_000, Mode::Multi(3), l)));
            let mut ps = PlotSeries::measured(format!("{tag}, {}", loss_label(l)), i, &pts);
            if s == Setting::Improved {
                ps.style = crate::plot::Style::Bound;
            }
            series.push(ps);
        }
    }
    Plot {
        id: "xtp-improved_vs_thesis".into(),
        title: "1 MB, multicast 1:3: thesis setting against the thesis's recommendations".into(),
        caption: "Solid: go-back-N with uncapped back-off; dashed: selective repeat, back-off capped at 1 s, SREQ every 8 packets (rmcast simulation). Missing points: every run failed.".into(),
        x: write_axis(),
        y: mbps_axis(),
        series,
    }
}

/// Receivers beyond the thesis (simulated).
fn receivers(m: &Measures) -> Option<Plot> {
    let mut series = Vec::new();
    let mut i = 0;
    for (name, meas) in m.iter() {
        if let (Some(rest), crate::measure::Measure::Series { points, .. }) =
            (name.strip_prefix("sim.scale."), meas)
        {
            series.push(PlotSeries::measured(
                rest.trim_end_matches(".mbps").to_string(),
                i,
                points,
            ));
            i += 1;
        }
    }
    (!series.is_empty()).then(|| Plot {
            id: "xtp-receivers".into(),
            title: "Beyond the thesis: 1 MB to many receivers (improved setting, simulated bus)".into(),
            caption: "Throughput against the number of receivers; w = write bytes, l = loss at one receiver in %. 0 = the run failed.".into(),
            x: Axis::new("receivers", "count"),
            y: mbps_axis(),
            series,
        })
}

/// The three places side by side: simulation, loopback, namespace hosts.
fn places(g: &Sources<'_>) -> Option<Plot> {
    let mut series = Vec::new();
    for (i, (tag, prefix)) in [
        ("simulated 10 Mb/s bus", "sim"),
        ("loopback sockets", "net"),
        ("namespace hosts, 10 Mb/s", "ns"),
    ]
    .iter()
    .enumerate()
    {
        for (l, what) in [(0, "no loss"), (10, "1/10 at one receiver")] {
            let pts = g.series_of(&format!("{prefix}.thesis.50k.m3.l{l}.mbps"));
            if pts.is_empty() {
                continue;
            }
            let mut ps = PlotSeries::measured(format!("{tag}, {what}"), i, &pts);
            if l > 0 {
                ps.style = crate::plot::Style::Bound;
            }
            series.push(ps);
        }
    }
    (!series.is_empty()).then(|| Plot {
            id: "xtp-places".into(),
            title: "50 KB to 3 receivers: simulation, loopback and namespace hosts".into(),
            caption: "Thesis setting (block on acknowledgment, go-back-N). Simulation: 10 Mb/s bus plus 4.7 ms per call (the 1997 hardware); loopback and namespace hosts: real UDP multicast sockets on this machine, no modelled per-call cost, one run per point. Solid: no loss; dashed: 1/10 dropped at one receiver.".into(),
            x: write_axis(),
            y: mbps_axis(),
            series,
        })
}

/// Beyond the thesis on real sockets: up to 10 namespace hosts.
fn ns_receivers(m: &Measures) -> Option<Plot> {
    let mut series = Vec::new();
    for (i, (l, what)) in [(0, "no loss"), (10, "1/10 at one receiver")]
        .iter()
        .enumerate()
    {
        if let Some(crate::measure::Measure::Series { points, .. }) =
            m.get(&format!("ns.scale.l{l}.mbps"))
        {
            series.push(PlotSeries::measured(
                format!("namespace hosts, {what}"),
                i,
                points,
            ));
        }
    }
    (!series.is_empty()).then(|| Plot {
            id: "xtp-ns-receivers".into(),
            title: "Beyond the thesis on real sockets: 1 MB to up to 10 namespace hosts".into(),
            caption: "Thesis setting, 8192-B writes, the sender and each receiver in its own network namespace, on one emulated 10 Mb/s shared medium. 0 = the run failed.".into(),
            x: Axis::new("receivers", "count"),
            y: mbps_axis(),
            series,
        })
}
