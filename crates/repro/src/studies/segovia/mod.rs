//! `segovia`: seed 000 (Segovia 1996) — multicast stop-and-wait (MSAW) and block
//! acknowledgment (MBAP) on one shared 10 Mb/s Ethernet, Tables 4.1–4.13, plus the
//! round-robin acknowledgment protocol (RRA) the thesis proposed but never built.
//!
//! Every run is one sender and `r` receivers on `rmcast_sim`'s bus (seed 000 §3: frame time
//! 8 × bytes bit times, no gap, no propagation delay, 1-persistent deferral, 32-bit-time
//! collisions, truncated binary exponential backoff in 512-bit slots, 16 attempts), driven
//! by `rmcast_proto::{saw, bap, rra}` with a saturated source. Per-record metrics are those of
//! [`metrics`] (means of per-record ratios, block records for MBAP). Failure rates are
//! Bernoulli drops on transmit and on receive at every interface.
//!
//! The study reads as: [`run`] (one run on the bus), `plan` (the families of runs per table),
//! this file (what is measured from them), `plots` and `setup` (the report's figures and text).

pub mod metrics;
mod mutants;
mod plan;
mod plots;
mod run;
mod setup;
#[cfg(test)]
mod tests;

pub use plan::error_increment;
pub use run::*;

use crate::sampling::Feed;
use crate::stats::Estimate;
use crate::study::{About, RunCtx, Study, StudyError, StudyOutput};
use crate::sweep::{est, fmt_series, point_seed, Agg, Column, Sweep};
use crate::Measures;
use plan::Plan;
use plots::paper_err_key;
use rmcast_sim::BusConfig;
use std::collections::BTreeMap;

/// The seed 000 study.
pub struct Segovia;

/// What is recorded per run, as `<family>.<name>` series over the family's x.
const COLUMNS: [Column<RunOut>; 17] = [
    ("rt_mean", |o| o.summary.rt.mean),
    ("rt_min", |o| o.summary.rt.min),
    ("rt_max", |o| o.summary.rt.max),
    ("at_mean", |o| o.summary.at.mean),
    ("lat_mean", |o| o.summary.latency.mean),
    ("lat_min", |o| o.summary.latency.min),
    ("lat_max", |o| o.summary.latency.max),
    ("lat_p25", |o| o.summary.latency_percentiles[1]),
    ("lat_p50", |o| o.summary.latency_percentiles[2]),
    ("lat_p75", |o| o.summary.latency_percentiles[3]),
    ("retx_mean", |o| o.summary.retransmissions.mean),
    ("retx_max", |o| o.summary.retransmissions.max),
    ("failed_frac", |o| o.failed_frac),
    ("retransmitted_frac", |o| o.retransmitted_frac),
    ("rt_aggregate", |o| o.rt_aggregate),
    ("collisions", |o| o.collisions_per_msg),
    ("acks", |o| o.acks_per_msg),
];

/// x of the largest mean.
fn peak_x(pts: &[(f64, Estimate)]) -> Option<f64> {
    pts.iter()
        .max_by(|a, b| a.1.mean.total_cmp(&b.1.mean))
        .map(|p| p.0)
}

/// Run every family at each of its x, `seeds` runs per x and more where a claim on the
/// family's measures is undecided (sequential sampling; run seeds derived from `salt`, the
/// family's index, x and the run's number).
fn run_families(
    ctx: &RunCtx<'_>,
    fams: &[plan::Family],
    salt: u64,
    seeds: u64,
) -> Result<(Sweep<RunSpec>, Vec<RunOut>), StudyError> {
    let mutant = ctx.mutant_of(mutants::MUTANTS);
    Sweep::sampled(
        ctx,
        fams,
        |f| (f.xs.as_slice(), seeds),
        |i, f, x, k| {
            let mut s = (f.make)(&f.cfg, x, point_seed(i as u64 ^ salt, x, k));
            mutants::apply(mutant, &mut s);
            s
        },
        |f, x| vec![Feed::at(format!("{}.*", f.key), x)],
        |s| s.receivers as u64,
        |s| run_one(s, false),
    )
}

/// The thesis's tabulated receiver counts (bounds are checked at these).
const TABLE_RS: [f64; 12] = [
    5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0, 55.0, 60.0,
];

impl Study for Segovia {
    /// Its wall time in the full run of 2026-11-29 (sharing two cores), in seconds.
    fn cost_hint(&self) -> u32 {
        139
    }

    fn mutants(&self) -> Vec<crate::Mutant> {
        mutants::MUTANTS.to_vec()
    }

    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        let plan = Plan::for_ctx(ctx);
        let unstated = plan::Unstated::from_ctx(ctx).map_err(StudyError::Run)?;
        let fams = plan.families(&unstated);
        // The mode's runs per point; sequential sampling applies the runs factor.
        let seeds = Plan::new(ctx.sweeps).seeds;
        let (sweep, results) = run_families(ctx, &fams, 0x5e60_0000, seeds)?;

        let mut agg = Agg::new();
        // Delivery checks: the thesis's configuration (every family but the sensitivity
        // variants `sens.*`, which change an unstated value on purpose) apart from those.
        let mut all_ok = Vec::new();
        let mut sens_ok = Vec::new();
        let mut failed_any_free = 0usize;
        let mut bad_runs: Vec<String> = Vec::new();
        let mut free_fail_runs: Vec<String> = Vec::new();
        // Per-seed latency at each failure rate, for the ratio claims.
        let mut per_seed_lat: BTreeMap<(usize, u64), Vec<(f64, f64)>> = Default::default();
        for (fi, f) in fams.iter().enumerate() {
            for &x in &f.xs {
                let runs = sweep.runs_at(&results, fi, x);
                let outs: Vec<&RunOut> = runs.iter().map(|(_, o)| *o).collect();
                agg.columns(&outs, x, &COLUMNS, |c| format!("{}.{c}", f.key))?;
                let sens = f.key.starts_with("sens.");
                // The timeout-selection scan tries increments down to 0 on purpose: a run
                // that gives a message up there is what the scan looks for, not a failure of
                // the thesis's configuration.
                let scan = f.key.starts_with("inc.");
                for (s, o) in &runs {
                    let ok = if o.delivery_ok { 1.0 } else { 0.0 };
                    if sens {
                        sens_ok.push(ok);
                    } else if !scan {
                        all_ok.push(ok);
                    }
                    if !o.delivery_ok {
                        bad_runs.push(format!(
                            "{} at x = {x} (seed {:#x}, {} failed messages)",
                            f.key,
                            s.seed,
                            o.failed_seqs.len()
                        ));
                    }
                    if s.fail == 0.0 && o.failed_frac > 0.0 {
                        failed_any_free += 1;
                        free_fail_runs.push(format!("{} at x = {x}", f.key));
                    }
                }
                for (i, (_, o)) in runs.iter().enumerate() {
                    per_seed_lat
                        .entry((fi, i as u64))
                        .or_default()
                        .push((x, o.summary.latency.mean));
                }
            }
        }

        // The thesis's timeout selection on rmcast's bus: per protocol and r, the smallest
        // scanned increment whose error-free runs retransmitted fewer than 2 % of the packets.
        let mut smallest: BTreeMap<String, Vec<(f64, Estimate)>> = BTreeMap::new();
        for f in &fams {
            let r = f.cfg.receivers;
            let Some(proto) = f
                .key
                .strip_prefix("inc.")
                .and_then(|k| k.strip_suffix(&format!("_r{r}")))
            else {
                continue;
            };
            let pts = agg.get(&format!("{}.retransmitted_frac", f.key));
            if let Some((x, _)) = pts.iter().find(|(_, e)| e.mean < plan::INCREMENT_CRITERION) {
                smallest
                    .entry(proto.to_string())
                    .or_default()
                    .push((r as f64, Estimate::exact(*x)));
            }
        }
        // MSAW's error tables with those increments (a second sweep: it needs the first).
        let found: Vec<(usize, u64)> = smallest
            .get("saw")
            .map(|v| {
                v.iter()
                    .map(|(r, e)| (*r as usize, e.mean as u64))
                    .collect()
            })
            .unwrap_or_default();
        let proc_fams = plan.procedure_families(&found, &unstated);
        let (sweep2, results2) = run_families(ctx, &proc_fams, 0x5e60_1000, seeds)?;
        for (fi, f) in proc_fams.iter().enumerate() {
            for &x in &f.xs {
                let runs = sweep2.runs_at(&results2, fi, x);
                let outs: Vec<&RunOut> = runs.iter().map(|(_, o)| *o).collect();
                agg.columns(&outs, x, &COLUMNS, |c| format!("{}.{c}", f.key))?;
            }
        }

        let mut m = Measures::new();
        agg.record(&mut m, unit_of);
        for (proto, pts) in smallest {
            m.series(
                format!("inc.{proto}.smallest"),
                "bit times",
                "receivers",
                pts,
            );
        }
        m.scalar("runs.delivery_ok", "fraction of runs", est(&all_ok)?);
        m.scalar("runs.sens_delivery_ok", "fraction of runs", est(&sens_ok)?);
        m.scalar(
            "runs.error_free_failures",
            "runs",
            Estimate::exact(failed_any_free as f64),
        );

        // Analytic bounds at the thesis's tabulated r, with our frames (d from the encoder).
        let bound_fams: Vec<(&str, Proto, u64)> = vec![
            ("t4_1", Proto::Saw, 1518),
            ("t4_2_d64", Proto::Saw, 64),
            ("t4_2_d848", Proto::Saw, 848),
            ("t4_2_d1436", Proto::Saw, 1436),
            ("t4_3", Proto::Saw, 1518),
            ("t4_4_w5", Proto::Bap { window: 5 }, 1518),
            ("t4_4_w10", Proto::Bap { window: 10 }, 1518),
            ("t4_4_w15", Proto::Bap { window: 15 }, 1518),
        ];
        for (key, proto, frame) in &bound_fams {
            let mut ub = Vec::new();
            let mut ua = Vec::new();
            let mut lb = Vec::new();
            let mut lim = 0.0;
            for &r in &TABLE_RS {
                let mut s = RunSpec::thesis(*proto, r as usize, 0);
                s.data_frame = *frame;
                let p = s.params();
                ub.push((r, Estimate::exact(p.ubrt())));
                ua.push((r, Estimate::exact(p.ubat())));
                lb.push((r, Estimate::exact(p.lbl())));
                lim = p.ubrt_limit();
            }
            m.series(
                format!("analytic.{key}.ubrt"),
                "dimensionless",
                "receivers",
                ub,
            );
            m.series(format!("analytic.{key}.ubat"), "Mb/s", "receivers", ua);
            m.series(format!("analytic.{key}.lbl"), "bit times", "receivers", lb);
            m.scalar(
                format!("analytic.{key}.limit"),
                "dimensionless",
                Estimate::exact(lim),
            );
        }
        // The frames the runs really used: d and a on the bus, from the encoders.
        let bus = BusConfig::default();
        for (name, proto) in [
            ("saw", Proto::Saw),
            ("bap", Proto::Bap { window: 10 }),
            ("rra", Proto::Rra { window: 120 }),
        ] {
            for frame in [64u64, 848, 1436, 1518] {
                if name != "saw" && frame != 1518 {
                    continue;
                }
                let pl = payload_for_frame(proto, frame, &bus).map_err(StudyError::Run)?;
                let len = data_datagram_len(proto, pl).map_err(StudyError::Run)?;
                m.scalar(
                    format!("frames.{name}.data{frame}"),
                    "bytes",
                    Estimate::exact(bus.frame_bytes(len) as f64),
                );
            }
        }

        // Peaks (x of the largest mean RT).
        for key in [
            "t4_1",
            "t4_2_d64",
            "t4_2_d848",
            "t4_2_d1436",
            "t4_3_rand12000",
            "t4_3_rand22000",
            "t4_3_rand32000",
        ] {
            if let Some(px) = peak_x(&agg.get(&format!("{key}.rt_mean"))) {
                m.scalar(format!("{key}.peak_r"), "receivers", est(&[px])?);
            }
        }
        // Error experiments: latency at 1 % over latency at 0 %, per seed.
        for (fi, f) in fams.iter().enumerate() {
            if !f.key.starts_with("err.") {
                continue;
            }
            // Per seed: latency at 1 % over latency at 0 %, and each further percentage point
            // from 1 % on, latency at x over latency at x − 1, less one (the thesis: "each
            // subsequent increase of one percentage point ... 10-30 % each time").
            let mut ratios = Vec::new();
            let mut steps: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
            // Every run index the family's points have (more than the mode's where sequential
            // sampling added runs; a ratio needs both of its points to have the run).
            for v in per_seed_lat.range((fi, 0)..(fi + 1, 0)).map(|(_, v)| v) {
                let at = |x: f64| v.iter().find(|p| p.0 == x).map(|p| p.1);
                if let (Some(a), Some(b)) = (at(0.0), at(1.0)) {
                    ratios.push(b / a);
                }
                for &x in plan.err_fails.iter().filter(|&&x| x >= 2.0) {
                    if let (Some(a), Some(b)) = (at(x - 1.0), at(x)) {
                        steps.entry(x as u64).or_default().push(b / a - 1.0);
                    }
                }
            }
            if !ratios.is_empty() {
                m.scalar(format!("{}.lat_ratio_1pct", f.key), "ratio", est(&ratios)?);
            }
            let pts = steps
                .iter()
                .map(|(&x, v)| Ok((x as f64, est(v)?)))
                .collect::<Result<Vec<_>, StudyError>>()?;
            if !pts.is_empty() {
                m.series(
                    format!("{}.lat_step", f.key),
                    "ratio",
                    "failure rate %",
                    pts,
                );
            }
        }

        let plots = plots::plots(ctx, &agg, &m)?;
        let setup = setup::setup(&plan, &unstated, sweep.len())?;
        let mut notes = vec![
            format!(
                "The thesis ran one repetition per point (its SAS notes: reps \"always 1\"); \
                 rmcast averages at least {} seeds per point (more where a claim was undecided: \
                 see the sequential-sampling note) and shows the 95 % confidence interval of \
                 the mean across seeds. The thesis's Min/Max columns are per-packet extremes \
                 within its single run.",
                plan.seeds
            ),
            format!(
                "Error-free runs in which a message hit the retransmission limit: \
                 {failed_any_free} ({}).",
                free_fail_runs.join("; ")
            ),
        ];
        // Measured against the thesis, compactly, for the reader.
        let fmt_pts = |name: &str, paper: Option<&str>| -> String {
            let pp = paper.and_then(|k| ctx.paper(k).ok());
            fmt_series(
                &agg.get(name),
                "thesis",
                &pp.map(|p| p.points()).unwrap_or_default(),
            )
        };
        for (name, paper) in [
            ("t4_1.rt_mean", Some("t4_1_mean_rt")),
            ("t4_1.lat_mean", Some("t4_1_mean_lat")),
            ("t4_4_w10.rt_mean", Some("t4_4_w10_mean_rt")),
            ("t4_1.collisions", None),
            ("t4_4_w10.collisions", None),
            ("rra.collisions", None),
            ("t4_1.rt_aggregate", None),
            ("rra.rt_aggregate", None),
        ] {
            notes.push(format!("{name} by receivers: {}.", fmt_pts(name, paper)));
        }
        for f in fams
            .iter()
            .filter(|f| f.key.starts_with("err.") || paper_err_key(&f.key).is_some())
        {
            let fam = f.key.trim_start_matches("err.");
            let pl = paper_err_key(fam);
            let pr = pl.as_ref().map(|k| k.replace("_mean_lat", "_mean_retr"));
            notes.push(format!(
                "{} by failure rate %: mean latency {}; mean retransmissions {}; failed fraction {}.",
                f.key,
                fmt_pts(&format!("{}.lat_mean", f.key), pl.as_deref()),
                fmt_pts(&format!("{}.retx_mean", f.key), pr.as_deref()),
                fmt_pts(&format!("{}.failed_frac", f.key), None),
            ));
        }
        if !bad_runs.is_empty() {
            notes.push(format!(
                "Runs whose delivery check failed (a receiver missed a message the sender \
                 did not give up on, or got one twice or out of order; sens.* runs are \
                 sensitivity variants, counted apart in runs.sens_delivery_ok, {} of {} \
                 runs delivered; where the sender gives up on many messages, bap's receiver \
                 can skip past them only while it lags by fewer than n, its sequence numbers \
                 being modulo 2n, and saw's 1-bit sequence number cannot tell a missed \
                 given-up message from a duplicate, so a receiver then misses or misnumbers \
                 later messages): {}.",
                sens_ok.iter().filter(|&&v| v == 1.0).count(),
                sens_ok.len(),
                bad_runs.join("; ")
            ));
        }
        if ctx.quick() {
            notes.push(format!(
                "Quick mode: fewer receiver counts, {} seeds, {} messages (180 for BAP), \
                 error experiments at r = 20 and 0–1 % only, window 10 only.",
                plan.seeds, plan.messages
            ));
        }
        Ok(StudyOutput {
            setup,
            measures: m,
            plots,
            notes,
        })
    }

    fn about(&self) -> About {
        crate::about!(
            "segovia",
            "Multicast stop-and-wait and block acknowledgment on a shared Ethernet (Segovia 1996)",
            "seed 000 (Segovia 1996, MSc thesis): §4.1 bounds, Tables 4.1–4.13; RRA from Ch. 5",
        )
    }
}

fn unit_of(name: &str) -> (&'static str, &'static str) {
    // Runs under failures name their receiver count (`_r40_`); sweeps over r do not.
    let names_r = name.split(['_', '.']).any(|p| {
        p.strip_prefix('r')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    });
    let xl = if name.starts_with("inc.") {
        "timeout increment (bit times)"
    } else if names_r {
        "failure rate %"
    } else {
        "receivers"
    };
    let unit = if name.contains(".rt_") {
        "dimensionless"
    } else if name.contains(".at_") {
        "Mb/s"
    } else if name.contains(".lat_") {
        "bit times"
    } else if name.contains(".retx") {
        "retransmissions per message"
    } else if name.contains(".collisions") {
        "collisions per message"
    } else if name.contains(".acks") {
        "ACKs per message"
    } else {
        "fraction"
    };
    (unit, xl)
}
