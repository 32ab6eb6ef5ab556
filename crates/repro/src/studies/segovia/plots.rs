//! The study's plots: relative throughput against the bounds, latency, collisions, RRA,
//! failures and sensitivity.

use crate::measure::{means, Measures};
use crate::plot::{Axis, Plot, PlotSeries, Style};
use crate::plot_spec::PlotSpec;
use crate::study::{RunCtx, StudyError};
use crate::sweep::Agg;
use serde::Deserialize;

/// The figures besides Tables 4.1–4.5, declared as data.
const PLOTS_TOML: &str = include_str!("../../../../../scenarios/repro/segovia/plots.toml");

/// Tables 4.1–4.5's plots: which families each draws.
const RT_PLOTS_TOML: &str = include_str!("../../../../../scenarios/repro/segovia/rt-plots.toml");

/// `rt-plots.toml`: one plot per table.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RtPlots {
    table: Vec<RtPlot>,
}

/// One table's plot: its id (after `segovia-rt-`), title and families as (measure key, label).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RtPlot {
    id: String,
    title: String,
    families: Vec<(String, String)>,
}

pub(super) fn plots(ctx: &RunCtx<'_>, agg: &Agg, m: &Measures) -> Result<Vec<Plot>, StudyError> {
    let mut out = Vec::new();
    let bound = |key: &str| means(m, &format!("analytic.{key}.ubrt"));
    // Tables 4.1–4.5, declared as data: per family rmcast's relative throughput, the thesis's
    // Mean RT column and the UBRT where the study computed one.
    let tables: RtPlots = toml::from_str(RT_PLOTS_TOML)
        .map_err(|e| StudyError::Run(format!("scenarios/repro/segovia/rt-plots.toml: {e}")))?;
    for RtPlot {
        id,
        title,
        families,
    } in tables.table
    {
        let mut series = Vec::new();
        for (c, (fam, label)) in families.iter().enumerate() {
            series.push(PlotSeries::measured(
                format!("rmcast {label}"),
                c,
                &agg.get(&format!("{fam}.rt_mean")),
            ));
            series.push(PlotSeries::paper(
                format!("thesis {label}"),
                c,
                &ctx.paper(&format!("{fam}_mean_rt"))?.points(),
            ));
            let ubrt = bound(fam);
            if !ubrt.is_empty() {
                series.push(PlotSeries::bound(format!("UBRT {label}"), c, &ubrt));
            }
        }
        out.push(Plot {
            id: format!("segovia-rt-{id}"),
            title,
            caption: "Mean over records of the per-record relative throughput r·(n·d + a)/latency \
                      (records are messages for MSAW, blocks of n for MBAP) against the number \
                      of receivers, mean and 95 % CI across seeds; diamonds: the thesis's \
                      Mean RT column (one run each); dashed: the upper bound UBRT (eq. 4.5/4.13)."
                .into(),
            x: Axis::new("receivers r", "count"),
            y: Axis::new("relative throughput", "dimensionless"),
            series,
        });
    }
    // The figures declared as data; the failure-rate plots get the error families' curves.
    // Error experiments: latency against failure rate.
    let mut saw_s = Vec::new();
    let mut bap_s = Vec::new();
    for (c, (key, _)) in agg
        .iter()
        .filter(|(k, _)| k.starts_with("err.") && k.ends_with(".lat_mean"))
        .enumerate()
    {
        let fam = key.trim_start_matches("err.").trim_end_matches(".lat_mean");
        let paper_key = paper_err_key(fam);
        let target = if fam.starts_with("saw") {
            &mut saw_s
        } else {
            &mut bap_s
        };
        target.push(PlotSeries::measured(
            fam.replace('_', " "),
            c,
            &agg.get(key),
        ));
        if let Some(p) = paper_key.and_then(|k| ctx.paper(&k).ok()) {
            target.push(PlotSeries::paper(
                format!("thesis {}", fam.replace('_', " ")),
                c,
                &p.points(),
            ));
        }
    }
    let mut from_sweep = [
        ("segovia-errors-msaw", saw_s),
        ("segovia-errors-mbap", bap_s),
    ];
    for spec in PlotSpec::parse_all("scenarios/repro/segovia/plots.toml", PLOTS_TOML)? {
        let mut p = spec.plot(m, ctx)?;
        if let Some((_, s)) = from_sweep.iter_mut().find(|(id, _)| *id == p.id) {
            p.series = std::mem::take(s);
        }
        if ["segovia-msaw-drop2", "segovia-timeout-selection"].contains(&p.id.as_str()) {
            // Quick mode runs r = 20 only: keep the r values (one colour each) that ran.
            let ran: Vec<usize> = p
                .series
                .iter()
                .filter(|s| s.style != Style::Paper && !s.points.is_empty())
                .map(|s| s.color)
                .collect();
            p.series.retain(|s| ran.contains(&s.color));
        }
        out.push(p);
    }
    Ok(out)
}

/// The claims file's paper table for an error family such as `bap_w10_r20_rand0`.
pub(super) fn paper_err_key(fam: &str) -> Option<String> {
    // A sensitivity family under failures (`<proto>_r<r>_<choice>`) compares with the
    // thesis's runs at the same r without random wait.
    let sens;
    let fam = match fam.strip_prefix("sens.") {
        Some(f) => {
            let at = ["_r20_", "_r40_", "_r60_"]
                .iter()
                .filter_map(|r| f.find(r).map(|i| (i, *r)))
                .min()?;
            sens = format!("{}{}rand0", f.get(..at.0)?, at.1);
            sens.as_str()
        }
        None => fam,
    };
    let r = if fam.contains("_r20_") {
        20
    } else if fam.contains("_r40_") {
        40
    } else if fam.contains("_r60_") {
        60
    } else {
        return None;
    };
    let rand = fam.ends_with("rand22000");
    let table = if fam.starts_with("saw") {
        if rand {
            "4_7"
        } else {
            "4_6"
        }
    } else {
        match (r, rand) {
            (20, false) => "4_8",
            (40, false) => "4_9",
            (60, false) => "4_10",
            (20, true) => "4_11",
            (40, true) => "4_12",
            _ => "4_13",
        }
    };
    Some(format!("t{table}_{fam}_mean_lat"))
}
