//! Figures 6–9 and the beyond-the-thesis plots.

use super::super::xtp_grid::*;
use super::key;
use crate::plot::{Axis, Plot, PlotSeries};
use crate::stats::Estimate;
use crate::study::{RunCtx, StudyError};
use crate::Measures;

pub(super) fn plots(ctx: &RunCtx<'_>, m: &Measures) -> Result<Vec<Plot>, StudyError> {
    let series_of = |name: &str| -> Vec<(f64, Estimate)> {
        m.points(name)
            .into_iter()
            .map(|(x, e)| (x.log2(), e))
            .collect()
    };
    let paper = |name: &str| -> Vec<(f64, f64)> {
        ctx.paper(name)
            .map(|t| t.points().into_iter().map(|(x, y)| (x.log2(), y)).collect())
            .unwrap_or_default()
    };
    let x = Axis::new("write size, log2 bytes (6 = 64 B, 13 = 8192 B)", "log2 B");
    let y = Axis::new("throughput", "Mbit/s");
    let mut out = Vec::new();
    let loss_label = |l: u32| match l {
        0 => "no induced errors".to_string(),
        4 => "1 of 25 dropped".to_string(),
        10 => "1 of 10 dropped".to_string(),
        _ => "1 of 5 dropped".to_string(),
    };
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
                    &series_of(&format!("{k}.mbps")),
                ));
                let p = paper(&format!("mbps_{}_l{}_{}", msg_key(msg), l, md.key()));
                if !p.is_empty() {
                    series.push(PlotSeries::paper(format!("thesis, {}", md.label()), i, &p));
                }
            }
            out.push(Plot {
                id: format!("xtp-fig4_{fig}"),
                title: format!("Figure 4.{fig}: {} message, {}", if msg < 100_000 { "50 KB" } else { "1 MB" }, loss_label(l)),
                caption: "Throughput against write size; lines: rmcast's simulation (thesis setting: go-back-N, uncapped WTIMER back-off, 4.7 ms per call, 4-ms WTIMER floor, 10 Mb/s bus), points: the thesis's table (failed cells absent).".into(),
                x: x.clone(),
                y: y.clone(),
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
                    &series_of(&format!("{k}.mbps")),
                ));
                let p = paper(&format!("mbps_{}_l{}_{}", msg_key(msg), l, md.key()));
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
                x: x.clone(),
                y: y.clone(),
                series,
            });
            fig += 1;
        }
    }
    // Thesis setting against the recommendations, 1 MB, 1:3, every loss level.
    let mut series = Vec::new();
    for (i, &(l, _)) in LOSSES.iter().enumerate() {
        for (s, tag) in [(Setting::Thesis, "thesis"), (Setting::Improved, "improved")] {
            let pts = series_of(&format!("{}.mbps", key(s, 1_024_000, Mode::Multi(3), l)));
            let mut ps = PlotSeries::measured(format!("{tag}, {}", loss_label(l)), i, &pts);
            if s == Setting::Improved {
                ps.style = crate::plot::Style::Bound;
            }
            series.push(ps);
        }
    }
    out.push(Plot {
        id: "xtp-improved_vs_thesis".into(),
        title: "1 MB, multicast 1:3: thesis setting against the thesis's recommendations".into(),
        caption: "Solid: go-back-N with uncapped back-off; dashed: selective repeat, back-off capped at 1 s, SREQ every 8 packets (rmcast simulation). Missing points: every run failed.".into(),
        x: x.clone(),
        y: y.clone(),
        series,
    });
    // Receivers beyond the thesis.
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
    if !series.is_empty() {
        out.push(Plot {
            id: "xtp-receivers".into(),
            title: "Beyond the thesis: 1 MB to many receivers (improved setting, simulated bus)".into(),
            caption: "Throughput against the number of receivers; w = write bytes, l = loss at one receiver in %. 0 = the run failed.".into(),
            x: Axis::new("receivers", "count"),
            y: y.clone(),
            series,
        });
    }
    // The three places side by side: simulation, loopback, namespace hosts.
    let mut series = Vec::new();
    for (i, (tag, prefix)) in [
        ("simulated 10 Mb/s bus", "sim"),
        ("loopback sockets", "net"),
        ("namespace hosts on a bridge", "ns"),
    ]
    .iter()
    .enumerate()
    {
        for (l, what) in [(0, "no loss"), (10, "1/10 at one receiver")] {
            let pts = series_of(&format!("{prefix}.thesis.50k.m3.l{l}.mbps"));
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
    if !series.is_empty() {
        out.push(Plot {
            id: "xtp-places".into(),
            title: "50 KB to 3 receivers: simulation, loopback and namespace hosts".into(),
            caption: "Thesis setting (block on acknowledgment, go-back-N). Simulation: 10 Mb/s bus plus 4.7 ms per call (the 1997 hardware); loopback and namespace hosts: real UDP multicast sockets on this machine, no modelled per-call cost, one run per point. Solid: no loss; dashed: 1/10 dropped at one receiver.".into(),
            x: x.clone(),
            y: y.clone(),
            series,
        });
    }
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
    if !series.is_empty() {
        out.push(Plot {
            id: "xtp-ns-receivers".into(),
            title: "Beyond the thesis on real sockets: 1 MB to up to 10 namespace hosts".into(),
            caption: "Thesis setting, 8192-B writes, the sender and each receiver in its own network namespace on one bridge (this machine's 2 cores run every endpoint). 0 = the run failed.".into(),
            x: Axis::new("receivers", "count"),
            y: y.clone(),
            series,
        });
    }
    Ok(out)
}
