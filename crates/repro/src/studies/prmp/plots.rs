//! Figures 5–11, the RR sweep, and the scale and tree plots.

use super::derived::mean_at;
use super::run::Proto;
use crate::plot::{Axis, Plot, PlotSeries};
use crate::study::{RunCtx, StudyError};
use crate::sweep::Agg;

/// One measured curve per protocol version of `protos`: the series `<prefix>.<version key>`.
fn per_proto(agg: &Agg, prefix: &str, protos: &[Proto]) -> Vec<PlotSeries> {
    protos
        .iter()
        .map(|&p| {
            PlotSeries::measured(
                p.label(),
                p.color(),
                &agg.get(&format!("{prefix}.{}", p.key())),
            )
        })
        .collect()
}

/// The number-of-children axis of the group-size sweeps.
fn nc_axis() -> Axis {
    Axis::new("number of children NC", "count")
}

/// Every figure of the study, in report order.
pub(super) fn plots(ctx: &RunCtx<'_>, agg: &Agg) -> Result<Vec<Plot>, StudyError> {
    let mut out = nc_figures(ctx, agg)?;
    out.extend(rr_figures(agg));
    out.extend(scale_plots(agg));
    out.extend(tree_plots(agg));
    Ok(out)
}

/// Figures 5–9 and the LAN implosion losses §4 gives in its text: one metric of one
/// configuration against NC, one curve per version.
fn nc_figures(ctx: &RunCtx<'_>, agg: &Agg) -> Result<Vec<Plot>, StudyError> {
    let mut out = Vec::new();
    let figs: [(&str, &str, &str, &str, &str, Axis); 6] = [
        (
            "fig5",
            "lan",
            "t",
            "Figure 5: throughput T in the LAN configuration",
            "T = DP/Δt",
            Axis::new("throughput T", "packets/ms"),
        ),
        (
            "fig6",
            "lan",
            "n",
            "Figure 6: relative network cost N in the LAN configuration",
            "N = TP/(NC·DP)",
            Axis::new("relative network cost N", "dimensionless"),
        ),
        (
            "fig7",
            "hybrid",
            "i",
            "Figure 7: relative implosion losses I in the HYBRID configuration",
            "I = implosion losses/(NC·DP)",
            Axis::new("relative implosion losses I", "dimensionless"),
        ),
        (
            "fig8",
            "hybrid",
            "t",
            "Figure 8: throughput T in the HYBRID configuration",
            "T = DP/Δt",
            Axis::new("throughput T", "packets/ms"),
        ),
        (
            "fig9",
            "hybrid",
            "n",
            "Figure 9: relative network cost N in the HYBRID configuration",
            "N = TP/(NC·DP); the paper plots it on a log scale",
            Axis::new("relative network cost N", "dimensionless"),
        ),
        (
            "lan-i",
            "lan",
            "i",
            "Relative implosion losses I in the LAN configuration (§4 text)",
            "I = implosion losses/(NC·DP); diamonds: the two values §4 gives for PF",
            Axis::new("relative implosion losses I", "dimensionless"),
        ),
    ];
    for (id, cfg, metric, title, what, y) in figs {
        let mut series = per_proto(agg, &format!("{cfg}.{metric}"), &Proto::ALL);
        if cfg == "hybrid" {
            // Beyond the paper: FF and FF-IW with cumulative ACKs.
            series.extend(per_proto(
                agg,
                &format!("{cfg}.{metric}"),
                &Proto::CUMULATIVE,
            ));
        }
        if id == "lan-i" {
            series.push(PlotSeries::paper(
                "paper PF (§4 text)",
                Proto::Pf.color(),
                &ctx.paper("lan_i_pf")?.points(),
            ));
        }
        out.push(Plot {
            id: format!("prmp-{id}"),
            title: title.into(),
            caption: format!(
                "{what}; mean and 95 % CI across runs. 1000 packets of 1 KB, IPG 1 ms, \
                 S = 64 (PF, FF) or 1000 (-IW), response buffer 16 at ITR = 1500/s (none for \
                 FF-IW-IT). HYBRID figures add, beyond the paper, FF and FF-IW whose \
                 receivers send cumulative ACKs (CUMACK). The seed's figures carry no numbers in its text, so only the \
                 values its text states are drawn as diamonds."
            ),
            x: nc_axis(),
            y,
            series,
        });
    }
    Ok(out)
}

/// Figures 10 and 11: the RR sweep, against FF-IW-IT (which does not poll) at NC = 60.
fn rr_figures(agg: &Agg) -> Vec<Plot> {
    let mut out = Vec::new();
    for (id, metric, title, y) in [
        (
            "fig10",
            "t",
            "Figure 10: effect of RR on throughput T (LAN, NC = 60)",
            Axis::new("throughput T", "packets/ms"),
        ),
        (
            "fig11",
            "n",
            "Figure 11: effect of RR on relative network cost N (LAN, NC = 60)",
            Axis::new("relative network cost N", "dimensionless"),
        ),
    ] {
        let mut series = vec![
            PlotSeries::measured("PF", 0, &agg.get(&format!("rr.{metric}.pf"))),
            PlotSeries::measured("PF-IW", 1, &agg.get(&format!("rr.{metric}.pf_iw"))),
        ];
        let it = agg.get(&format!("lan.{metric}.ff_iw_it"));
        if let Some(v) = mean_at(&it, 60.0) {
            let rr = agg.get(&format!("rr.{metric}.pf"));
            let line: Vec<(f64, f64)> = rr.iter().map(|(x, _)| (*x, v)).collect();
            series.push(PlotSeries::bound(
                "FF-IW-IT (no RR; LAN NC = 60 runs)",
                4,
                &line,
            ));
        }
        out.push(Plot {
            id: format!("prmp-{id}"),
            title: title.into(),
            caption: "PRMP's response rate RR swept at ITR = 1500/s, 60 LAN children; mean and \
                      95 % CI across runs; dashed: FF-IW-IT, which does not poll, at NC = 60."
                .into(),
            x: Axis::new("response rate RR", "responses/s"),
            y,
            series,
        });
    }
    out
}

/// Beyond the paper: throughput and network cost with 100 to 10,000 LAN children.
fn scale_plots(agg: &Agg) -> Vec<Plot> {
    let mut out = Vec::new();
    for (metric, title, y) in [
        (
            "t",
            "Beyond the paper: throughput T with 100 to 10,000 LAN children",
            Axis::new("throughput T", "packets/ms"),
        ),
        (
            "n",
            "Beyond the paper: relative network cost N with 100 to 10,000 LAN children",
            Axis::new("relative network cost N", "dimensionless"),
        ),
    ] {
        let scaled = [Proto::Pf, Proto::PfIw, Proto::Ff, Proto::FfIwIt];
        let series = per_proto(agg, &format!("scale.{metric}"), &scaled);
        out.push(Plot {
            id: format!("prmp-scale-{metric}"),
            title: title.into(),
            caption: "LAN star, §4's settings; a run that does not finish within 600 simulated \
                      seconds counts the packets acknowledged by then (T is then a lower bound)."
                .into(),
            x: nc_axis(),
            y,
            series,
        });
    }
    out
}

/// Beyond the paper: single-level against multi-level PRMP on a transit–stub graph.
fn tree_plots(agg: &Agg) -> Vec<Plot> {
    let mut out = Vec::new();
    for (metric, title, y) in [
        ("t", "Beyond the paper: single-level vs multi-level PRMP on a transit–stub graph, throughput", Axis::new("throughput T", "packets/ms")),
        ("root_feedback", "Beyond the paper: feedback arriving at the source, single-level vs multi-level", Axis::new("packets at the source per data packet", "dimensionless")),
        ("i", "Beyond the paper: implosion losses at all parents, single-level vs multi-level", Axis::new("implosion losses / (NC·DP)", "dimensionless")),
    ] {
        out.push(Plot {
            id: format!("prmp-tree-{}", metric.replace('_', "-")),
            title: title.into(),
            caption: "GT-ITM-style transit–stub graph (100 routers: 4 transit, 12 stub domains \
                      of 8), receivers on random stub routers over LAN-class access links; PF \
                      (S = 64, RR = ITR = 1500/s) from the source to every receiver, or one \
                      relay per stub domain polling the rest of its domain. Mean and 95 % CI."
                .into(),
            x: Axis::new("number of receivers NC", "count"),
            y,
            series: vec![
                PlotSeries::measured("single-level PF", 0, &agg.get(&format!("tree.{metric}.single"))),
                PlotSeries::measured("multi-level PF (relay per stub domain)", 1, &agg.get(&format!("tree.{metric}.multi"))),
            ],
        });
    }
    out
}
