//! What the study measures from its runs: every family's columns per x, the delivery checks,
//! the timeout increments the thesis's selection finds, the analytic bounds and frame sizes,
//! the peaks, and the latency ratios of the error experiments.

use super::plan::{self, Family, Plan};
use super::{data_datagram_len, payload_for_frame, Proto, RunOut, RunSpec};
use crate::stats::Estimate;
use crate::study::StudyError;
use crate::sweep::{est, Agg, Column, Sweep};
use crate::Measures;
use rmcast_sim::BusConfig;
use std::collections::BTreeMap;

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

/// The thesis's tabulated receiver counts (bounds are checked at these).
const TABLE_RS: [f64; 12] = [
    5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0, 55.0, 60.0,
];

/// Record every family's columns at each of its x into `agg`.
pub(super) fn aggregate(
    fams: &[Family],
    sweep: &Sweep<RunSpec>,
    results: &[RunOut],
    agg: &mut Agg,
) -> Result<(), StudyError> {
    for (fi, f) in fams.iter().enumerate() {
        for &x in &f.xs {
            let runs = sweep.runs_at(results, fi, x);
            let outs: Vec<&RunOut> = runs.iter().map(|(_, o)| *o).collect();
            agg.columns(&outs, x, &COLUMNS, |c| format!("{}.{c}", f.key))?;
        }
    }

    Ok(())
}

/// The delivery checks of the first sweep: the thesis's configuration (every family but the
/// sensitivity variants `sens.*`, which change an unstated value on purpose) apart from those,
/// and each run's latency at each failure rate, for the ratio claims.
#[derive(Default)]
pub(super) struct Checks {
    /// 1 per run of the thesis's configuration that delivered, else 0.
    all_ok: Vec<f64>,
    /// The same for the sensitivity variants.
    pub(super) sens_ok: Vec<f64>,
    /// Error-free runs in which a message hit the retransmission limit.
    pub(super) failed_any_free: usize,
    /// Runs whose delivery check failed.
    pub(super) bad_runs: Vec<String>,
    /// The error-free runs that gave a message up.
    pub(super) free_fail_runs: Vec<String>,
    /// Per (family index, run index): (failure rate, mean latency) at each x.
    per_seed_lat: BTreeMap<(usize, u64), Vec<(f64, f64)>>,
}

impl Checks {
    /// Record the first sweep's columns into `agg`, and check each of its runs.
    pub(super) fn of(
        fams: &[Family],
        sweep: &Sweep<RunSpec>,
        results: &[RunOut],
        agg: &mut Agg,
    ) -> Result<Self, StudyError> {
        let mut checks = Checks::default();
        for (fi, f) in fams.iter().enumerate() {
            for &x in &f.xs {
                let runs = sweep.runs_at(results, fi, x);
                let outs: Vec<&RunOut> = runs.iter().map(|(_, o)| *o).collect();
                agg.columns(&outs, x, &COLUMNS, |c| format!("{}.{c}", f.key))?;
                checks.check(f, x, &runs);
                for (i, (_, o)) in runs.iter().enumerate() {
                    checks
                        .per_seed_lat
                        .entry((fi, i as u64))
                        .or_default()
                        .push((x, o.summary.latency.mean));
                }
            }
        }
        Ok(checks)
    }

    /// Check the runs of family `f` at `x`.
    fn check(&mut self, f: &Family, x: f64, runs: &[(&RunSpec, &RunOut)]) {
        let sens = f.key.starts_with("sens.");
        // The timeout-selection scan tries increments down to 0 on purpose: a run
        // that gives a message up there is what the scan looks for, not a failure of
        // the thesis's configuration.
        let scan = f.key.starts_with("inc.");
        for (s, o) in runs {
            let ok = if o.delivery_ok { 1.0 } else { 0.0 };
            if sens {
                self.sens_ok.push(ok);
            } else if !scan {
                self.all_ok.push(ok);
            }
            if !o.delivery_ok {
                self.bad_runs.push(format!(
                    "{} at x = {x} (seed {:#x}, {} failed messages)",
                    f.key,
                    s.seed,
                    o.failed_seqs.len()
                ));
            }
            if s.fail == 0.0 && o.failed_frac > 0.0 {
                self.failed_any_free += 1;
                self.free_fail_runs.push(format!("{} at x = {x}", f.key));
            }
        }
    }

    /// Record the delivery checks.
    pub(super) fn record(&self, m: &mut Measures) -> Result<(), StudyError> {
        m.scalar("runs.delivery_ok", "fraction of runs", est(&self.all_ok)?);
        m.scalar(
            "runs.sens_delivery_ok",
            "fraction of runs",
            est(&self.sens_ok)?,
        );
        m.scalar(
            "runs.error_free_failures",
            "runs",
            Estimate::exact(self.failed_any_free as f64),
        );
        Ok(())
    }

    /// Error experiments: per run, latency at 1 % over latency at 0 %, and each further step.
    pub(super) fn error_ratios(
        &self,
        fams: &[Family],
        plan: &Plan,
        m: &mut Measures,
    ) -> Result<(), StudyError> {
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
            for v in self
                .per_seed_lat
                .range((fi, 0)..(fi + 1, 0))
                .map(|(_, v)| v)
            {
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

        Ok(())
    }
}

/// The thesis's timeout selection on rmcast's bus: per protocol and r, the smallest scanned
/// increment whose error-free runs retransmitted fewer than 2 % of the packets.
pub(super) fn smallest_increments(
    fams: &[Family],
    agg: &Agg,
) -> BTreeMap<String, Vec<(f64, Estimate)>> {
    let mut smallest: BTreeMap<String, Vec<(f64, Estimate)>> = BTreeMap::new();
    for f in fams {
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
    smallest
}

/// MSAW's increments `smallest` found, as (r, increment): the second sweep's input.
pub(super) fn saw_increments(
    smallest: &BTreeMap<String, Vec<(f64, Estimate)>>,
) -> Vec<(usize, u64)> {
    smallest
        .get("saw")
        .map(|v| {
            v.iter()
                .map(|(r, e)| (*r as usize, e.mean as u64))
                .collect()
        })
        .unwrap_or_default()
}

/// Record the increments `smallest` found.
pub(super) fn record_increments(
    smallest: BTreeMap<String, Vec<(f64, Estimate)>>,
    m: &mut Measures,
) {
    for (proto, pts) in smallest {
        m.series(
            format!("inc.{proto}.smallest"),
            "bit times",
            "receivers",
            pts,
        );
    }
}

/// Analytic bounds at the thesis's tabulated r, with our frames (d from the encoder).
pub(super) fn analytic_bounds(m: &mut Measures) {
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
}

/// The frames the runs really used: d and a on the bus, from the encoders.
pub(super) fn frames(m: &mut Measures) -> Result<(), StudyError> {
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

    Ok(())
}

/// The receiver count of the largest mean RT, per table.
pub(super) fn peaks(agg: &Agg, m: &mut Measures) -> Result<(), StudyError> {
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
    Ok(())
}

/// The unit and x label of a recorded series.
pub(super) fn unit_of(name: &str) -> (&'static str, &'static str) {
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
