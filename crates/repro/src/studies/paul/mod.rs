//! Seed 001 (Paul, Sabnani & Kristol): DSP, CSP and CP on the §7 topology — six local
//! exchanges at round-trip delays of 10, 25, 30, 40, 50 and 60 ms, 25 destinations, 150 Mb/s,
//! 1024-byte blocks, r_f = 1.2, block error rate 10⁻³, status every 4–6 ms — with the sweeps
//! of Figures 4–12, the analytic throughput of §6 (eq. 1–4) beside every throughput figure,
//! and, beyond the paper, DSP and CP with 1,000 and 10,000 destinations over 100 exchanges.

use crate::claim::fmt_num;
use crate::plot::{Axis, Plot, PlotSeries};
use crate::plot_spec::PlotSpec;
use crate::sampling::Feed;
use crate::stats::Estimate;
use crate::study::{About, RunCtx, Setup, Study, StudyError, StudyOutput};
use crate::sweep::join;
use crate::Measures;
use core::time::Duration;
use rmcast_proto::rng::mix64;
use rmcast_proto::tree::{Settings, Variant};
use std::collections::BTreeMap;

mod measure;
mod plan;
mod sim;

use measure::{Measured, Runs};
use plan::{Fam, Plan, Point, VARIANTS};

pub use sim::{run_one, RunOut, Spec, BLOCK, DATA_OVERHEAD, LINK_FACTOR, RTDS_MS, STATUS_MEAN_S};

/// Equation (4) of §6: `ρ = ((b·n)⁻¹ + W) / ((b·n)⁻¹ + (1 − ln n / ln b)(r_f·w̄_s + 1) +
/// w_s,max)`, capped at 1 (observation 3: ρ = 1 once W reaches w_x). Windows in blocks.
pub fn rho_model(w: f64, b: f64, n: f64, r_f: f64, wbar_s: f64, ws_max: f64) -> f64 {
    let bn_inv = 1.0 / (b * n);
    let wx = (1.0 - n.ln() / b.ln()) * (r_f * wbar_s + 1.0) + ws_max;
    ((bn_inv + w) / (bn_inv + wx)).min(1.0)
}

/// The model's inputs rmcast derives for a spec: `w̄_s` = blocks sent during the mean RTD
/// plus half a mean status interval, `w_s,max` = the same with the largest RTD.
pub fn model_inputs(s: &Spec) -> (f64, f64) {
    let ipt = s.ipt();
    let mean_rtd = s.rtds_ms.iter().sum::<f64>() / s.rtds_ms.len().max(1) as f64 / 1e3;
    let wbar = (mean_rtd + STATUS_MEAN_S / 2.0) / ipt;
    let wmax = (s.max_rtd_s() + STATUS_MEAN_S / 2.0) / ipt;
    (wbar, wmax)
}

/// ρ from eq. (4) for a spec.
pub fn rho_model_for(s: &Spec) -> f64 {
    let (wbar, wmax) = model_inputs(s);
    rho_model(f64::from(s.l()), s.err, s.dests as f64, s.r_f, wbar, wmax)
}

// ----------------------------------------------------------------------------- study

/// Run every point of `plan` (each run's spec as `mutant` changes it): the paper's points
/// `plan.seeds` times and more where a claim on them is undecided (sequential sampling), the
/// beyond-the-paper points, which no claim uses, once. Run k of a point uses a seed of the
/// point and k alone.
fn run_points(ctx: &RunCtx<'_>, plan: &Plan, mutant: Option<&str>) -> Result<Runs, StudyError> {
    let (paper, beyond) = plan.points();
    let spec_of = |&(fi, f, vi, v, x): &Point, k: u64| {
        let seed = mix64(mix64(0x9a01_0000 ^ (fi as u64) << 8 ^ vi as u64) ^ x.to_bits() ^ k);
        let mut s = plan.spec(f, v, x, seed);
        mutants::apply(mutant, &mut s);
        s
    };
    let feeds = |&(_, f, _, v, x): &Point| {
        vec![
            Feed::at(format!("{}.*.{}", f.key(), v.name()), x),
            Feed::all("runs.*"),
        ]
    };
    let run = |p: &Point, k: u64| {
        let s = spec_of(p, k);
        run_one(&s).map(|o| (s, o))
    };
    let mut sampled = ctx.sample(&paper, plan.seeds, feeds, run)?;
    sampled.extend(ctx.sample(&beyond, 1, |_| Vec::new(), run)?);
    let mut jobs: Vec<(Fam, Variant, f64, Spec)> = Vec::new();
    let mut results: Vec<RunOut> = Vec::new();
    for (p, runs) in paper.iter().chain(&beyond).zip(sampled) {
        for (s, o) in runs {
            jobs.push((p.1, p.3, p.4, s));
            results.push(o);
        }
    }
    Ok(Runs { jobs, results })
}

/// The paper's study (see the module doc).
pub struct Paul;

impl Study for Paul {
    /// Its wall time in the full run of 2026-11-29 (sharing two cores), in seconds.
    fn cost_hint(&self) -> u32 {
        244
    }

    fn mutants(&self) -> Vec<crate::Mutant> {
        mutants::MUTANTS.to_vec()
    }

    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        let plan = Plan::new(ctx.sweeps);
        let mutant = ctx.mutant_of(mutants::MUTANTS);
        let runs = run_points(ctx, &plan, mutant)?;
        let got = Measured::of(&plan, &runs)?;
        let mut m = Measures::new();
        got.record(&mut m)?;
        let plots = plots(ctx, &got.series, &m)?;
        let notes = got.notes(ctx, &plan, runs.results.len());
        Ok(StudyOutput {
            setup: setup(
                &Plan {
                    seeds: plan.seeds * u64::from(ctx.runs_factor()),
                    ..plan
                },
                runs.results.len(),
            )?,
            measures: m,
            plots,
            notes,
        })
    }

    fn about(&self) -> About {
        crate::about!(
            "paul",
            "Tree-based ACK consolidation and local re-multicast: DSP, CSP, CP",
            "seed 001 (Paul, Sabnani & Kristol: Multicast Transport Protocols for High Speed \
             Networks), §3–§7, eq. (1)–(4), Figures 4–12, Table 3",
        )
    }
}

/// Figures 5–7 (traffic and delay over the window size), declared as data.
const PLOTS_TOML: &str = include_str!("../../../../../scenarios/repro/paul/plots.toml");

fn plots(
    ctx: &RunCtx<'_>,
    series: &BTreeMap<String, Vec<(f64, Estimate)>>,
    m: &Measures,
) -> Result<Vec<Plot>, StudyError> {
    let get = |k: &str| series.get(k).cloned().unwrap_or_default();
    let per_protocol = |fam: &str, metric: &str, vs: &[Variant]| -> Vec<PlotSeries> {
        vs.iter()
            .map(|v| {
                let i = VARIANTS.iter().position(|w| w == v).unwrap_or(0);
                PlotSeries::measured(
                    format!("rmcast {}", v.name().to_uppercase()),
                    i,
                    &get(&format!("{fam}.{metric}.{}", v.name())),
                )
            })
            .collect()
    };
    let model = |fam: &str| {
        let pts: Vec<(f64, f64)> = get(&format!("model.{fam}.rho"))
            .iter()
            .map(|(x, e)| (*x, e.mean))
            .collect();
        PlotSeries::bound("eq. (4), capped at 1", 3, &pts)
    };
    let rho_plot = |id: &str, fig: &str, fam: Fam, what: &str| {
        let mut s = per_protocol(fam.key(), "rho", &VARIANTS);
        s.push(model(fam.key()));
        Plot {
            id: format!("paul-{id}"),
            title: format!("{fig}: normalized throughput vs {what}"),
            caption: format!(
                "Steady-state rate of new blocks at the source × block time, mean of the runs \
                 with 95 % CI, for DSP, CSP and CP on the §7 topology; dashed: eq. (4) of §6 \
                 with rmcast's w̄_s and w_s,max (setup). {}",
                match fam {
                    Fam::Speed =>
                        "The window is fixed at 2 × 60 ms of blocks at 150 Mb/s (2131 blocks).",
                    Fam::Err => "x is log10 of the block error rate.",
                    _ => "",
                }
            ),
            x: Axis::new(fam.x_label(), "see label"),
            y: Axis::new("normalized throughput ρ", "dimensionless"),
            series: s,
        }
    };
    let mut out = vec![rho_plot("fig4", "Figure 4", Fam::Win, "window size")];
    // Figures 5–7, declared as data.
    for spec in PlotSpec::parse_all("scenarios/repro/paul/plots.toml", PLOTS_TOML)? {
        out.push(spec.plot(m, ctx)?);
    }
    let mut fig8 = per_protocol("win", "status", &VARIANTS);
    if let Ok(t) = ctx.paper("status_rate") {
        fig8.push(PlotSeries::paper("paper (≈ typical)", 4, &t.points()));
    }
    out.push(Plot {
        id: "paul-fig8".into(),
        title: "Figure 8: acknowledgment (status) traffic vs window size".into(),
        caption: "Status packets arriving at the source per second (from the six E_i1 or \
                  exchanges); diamond: the paper's typical ≈ 1,500 packets/s."
            .into(),
        x: Axis::new(Fam::Win.x_label(), "× RTD"),
        y: Axis::new("status traffic", "packets/s"),
        series: fig8,
    });
    out.push(rho_plot(
        "fig9",
        "Figure 9",
        Fam::Rf,
        "retransmission timeout factor",
    ));
    out.push(rho_plot(
        "fig10",
        "Figure 10",
        Fam::Speed,
        "transmission speed",
    ));
    out.push(rho_plot("fig11", "Figure 11", Fam::Err, "block error rate"));
    out.push(rho_plot(
        "fig12",
        "Figure 12",
        Fam::Dests,
        "number of destinations",
    ));
    if series.contains_key("beyond.rho.dsp") {
        out.push(Plot {
            id: "paul-beyond".into(),
            title: "Beyond the paper: 1,000 and 10,000 destinations over 100 exchanges".into(),
            caption: "DSP and CP, window 2 × 60 ms, 150 Mb/s, block error rate 10⁻³, exchange \
                      RTDs spread evenly over 10–60 ms; one run each."
                .into(),
            x: Axis::new("destinations", "count"),
            y: Axis::new("normalized throughput ρ", "dimensionless"),
            series: per_protocol("beyond", "rho", &[Variant::Dsp, Variant::Cp]),
        });
    }
    Ok(out)
}

/// The study's setup as reported: `scenarios/repro/paul/setup.toml`, filled with the plan's
/// numbers.
fn setup(plan: &Plan, runs: usize) -> Result<Setup, StudyError> {
    // The fixed values as the runs use them: Figures 4–8's point and the protocols' defaults.
    let p = Spec::paper(Variant::Dsp, 2.0, plan.blocks, 0);
    let set = Settings::new(p.variant, p.l());
    let ms = |d: Duration| fmt_num(d.as_secs_f64() * 1e3);
    crate::setup!(
        "paul",
        &[
            ("speed", fmt_num(p.rate_mbps)),
            ("block", BLOCK.to_string()),
            ("datagram", (BLOCK + DATA_OVERHEAD).to_string()),
            ("header", DATA_OVERHEAD.to_string()),
            ("rf", fmt_num(p.r_f)),
            ("err", fmt_num(p.err)),
            ("status_min", ms(set.status_min.mul_f64(p.status_scale))),
            ("status_max", ms(set.status_max.mul_f64(p.status_scale))),
            ("rtds", join(&RTDS_MS)),
            ("link_factor", LINK_FACTOR.to_string()),
            ("windows", join(&plan.windows)),
            ("rfs", join(&plan.rfs)),
            ("speeds", join(&plan.speeds)),
            ("errs", join(&plan.errs)),
            ("dests", join(&plan.dests)),
            ("seeds", plan.seeds.to_string()),
            ("blocks", plan.blocks.to_string()),
            ("runs", runs.to_string()),
        ]
    )
}

mod mutants;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
