//! What the study records from its runs: per point, each metric's estimate across runs and
//! whether every run delivered every block exactly once; eq. (4) beside them; the derived
//! scalars the claims test; and the notes.

use super::plan::{Fam, Plan, FAMS, VARIANTS};
use super::{model_inputs, rho_model_for, RunOut, Spec};
use crate::stats::Estimate;
use crate::study::{RunCtx, StudyError};
use crate::sweep::{est, fmt_series};
use crate::Measures;
use rmcast_proto::tree::Variant;
use std::collections::BTreeMap;

/// The metrics recorded per point (mean, SD and CI of per-run values) and their units.
const METRICS: [(&str, &str); 14] = [
    ("rho", "normalized throughput"),
    ("delay", "ms"),
    ("delivery_delay", "ms"),
    ("global", "re-multicasts/s"),
    ("local", "re-multicasts/s"),
    ("status", "packets/s"),
    ("data", "packets/s"),
    ("throughput_pps", "blocks/s"),
    ("status_over_data", "ratio"),
    ("src_peak", "blocks"),
    ("local_peak", "blocks"),
    ("retx_total", "blocks"),
    ("buffer_total", "blocks"),
    ("wasted", "fraction of bandwidth"),
];

/// One run's value of metric `name`.
fn metric(o: &RunOut, s: &Spec, name: &str) -> f64 {
    let pps = o.rho / s.ipt();
    match name {
        "rho" => o.rho,
        "delay" => o.delay_ms,
        "delivery_delay" => o.delivery_delay_ms,
        "global" => o.global_rate,
        "local" => o.local_rate,
        "status" => o.status_rate,
        "data" => o.data_rate,
        "throughput_pps" => pps,
        "status_over_data" => o.status_rate / (pps + o.global_rate).max(1e-9),
        "src_peak" => o.src_peak,
        "local_peak" => o.local_peak,
        "retx_total" => o.retx_total,
        "buffer_total" => o.buffer_total,
        _ => 1.0 - o.rho,
    }
}

/// Named curves: (x, estimate) by measure name.
pub(super) type Curves = BTreeMap<String, Vec<(f64, Estimate)>>;

/// The runs made: each run's (family, protocol, x, spec) beside what it measured.
pub(super) struct Runs {
    pub(super) jobs: Vec<(Fam, Variant, f64, Spec)>,
    pub(super) results: Vec<RunOut>,
}

impl Runs {
    /// The runs of protocol `v` at point `x` of family `f`.
    fn at(&self, f: Fam, v: Variant, x: f64) -> Vec<(&Spec, &RunOut)> {
        self.jobs
            .iter()
            .zip(&self.results)
            .filter(|((jf, jv, jx, _), _)| *jf == f && *jv == v && *jx == x)
            .map(|((_, _, _, s), o)| (s, o))
            .collect()
    }
}

/// The curves of every metric and of eq. (4), and how the runs went.
pub(super) struct Measured {
    pub(super) series: Curves,
    /// 1 for a run that completed with every block delivered exactly once, else 0.
    runs_ok: Vec<f64>,
    /// The runs that did not: family, protocol, x and seed.
    bad: Vec<String>,
    /// Blocks dropped for arriving beyond a reassembly buffer, all runs.
    overflow: f64,
}

impl Measured {
    /// Every point's estimates across its runs, and eq. (4) for each family.
    pub(super) fn of(plan: &Plan, runs: &Runs) -> Result<Self, StudyError> {
        let mut got = Measured {
            series: BTreeMap::new(),
            runs_ok: Vec::new(),
            bad: Vec::new(),
            overflow: 0.0,
        };
        for &f in &FAMS {
            for v in VARIANTS {
                for x in plan.xs(f) {
                    let runs = runs.at(f, v, x);
                    if !runs.is_empty() {
                        got.add_point(f, v, x, &runs)?;
                    }
                }
                // The analytic eq. (4) beside the measurements (protocol-independent).
                if v == Variant::Dsp {
                    let pts: Vec<(f64, Estimate)> = plan
                        .xs(f)
                        .into_iter()
                        .map(|x| (x, Estimate::exact(rho_model_for(&plan.spec(f, v, x, 0)))))
                        .collect();
                    got.series.insert(format!("model.{}.rho", f.key()), pts);
                }
            }
        }
        Ok(got)
    }

    /// One point's metrics across its runs, and its runs' delivery checks.
    fn add_point(
        &mut self,
        f: Fam,
        v: Variant,
        x: f64,
        runs: &[(&Spec, &RunOut)],
    ) -> Result<(), StudyError> {
        let (series, runs_ok, bad) = (&mut self.series, &mut self.runs_ok, &mut self.bad);
        for (name, _) in METRICS {
            if matches!(name, "delay" | "delivery_delay") && !runs[0].0.record {
                continue;
            }
            let vals: Vec<f64> = runs.iter().map(|(s, o)| metric(o, s, name)).collect();
            series
                .entry(format!("{}.{name}.{}", f.key(), v.name()))
                .or_default()
                .push((x, est(&vals)?));
        }
        for (s, o) in runs {
            self.overflow += o.overflow;
            let ok = o.completed && o.exactly_once;
            runs_ok.push(if ok { 1.0 } else { 0.0 });
            if !ok {
                bad.push(format!(
                    "{} {} x = {x} seed {:#x}",
                    f.key(),
                    v.name(),
                    s.seed
                ));
            }
        }
        Ok(())
    }

    /// Record the curves, the share of runs delivered exactly once, and the derived scalars.
    pub(super) fn record(&self, m: &mut Measures) -> Result<(), StudyError> {
        for (name, pts) in &self.series {
            let fam = FAMS
                .iter()
                .find(|f| {
                    name.starts_with(&format!("{}.", f.key()))
                        || name.starts_with(&format!("model.{}.", f.key()))
                })
                .copied()
                .unwrap_or(Fam::Win);
            let metric_name = name.split('.').nth(1).unwrap_or("");
            let unit = METRICS
                .iter()
                .find(|(n, _)| *n == metric_name)
                .map_or("normalized throughput", |(_, u)| *u);
            m.series(name.clone(), unit, fam.x_label(), pts.clone());
        }
        m.scalar(
            "runs.delivered_exactly_once",
            "fraction of runs",
            est(&self.runs_ok)?,
        );
        // Derived: the smallest window reaching 95 % of the protocol's best throughput.
        for v in VARIANTS {
            if let Some(pts) = self.series.get(&format!("win.rho.{}", v.name())) {
                let best = pts.iter().map(|(_, e)| e.mean).fold(0.0, f64::max);
                if let Some((x, _)) = pts.iter().find(|(_, e)| e.mean >= 0.95 * best) {
                    m.scalar(
                        format!("win.peak_window.{}", v.name()),
                        "× largest RTD",
                        Estimate::exact(*x),
                    );
                }
            }
            if let Some(pts) = self.series.get(&format!("err.rho.{}", v.name())) {
                let at = |x: f64| {
                    pts.iter()
                        .find(|(px, _)| (px - x).abs() < 1e-9)
                        .map(|(_, e)| *e)
                };
                // With both spreads (`Estimate::over`); none when ρ at 1e-4 is 0.
                if let Some(r) = at(-3.0).zip(at(-4.0)).and_then(|(a, b)| a.over(&b)) {
                    m.scalar(format!("err.rho_ratio_1e3_1e4.{}", v.name()), "ratio", r);
                }
            }
        }
        Ok(())
    }

    /// The notes: how the `n_runs` runs went, eq. (4)'s inputs, the delays by window.
    pub(super) fn notes(&self, ctx: &RunCtx<'_>, plan: &Plan, n_runs: usize) -> Vec<String> {
        let s0 = Spec::paper(Variant::Dsp, 2.0, plan.blocks, 0);
        let (wbar, wmax) = model_inputs(&s0);
        let mut notes = vec![
            format!(
                "{} runs; {} completed with every destination receiving every block exactly \
             once and in order{}.",
                n_runs,
                self.runs_ok.iter().filter(|&&v| v > 0.0).count(),
                if self.bad.is_empty() {
                    String::new()
                } else {
                    format!(" (not: {})", self.bad.join("; "))
                }
            ),
            format!(
            "eq. (4) inputs at the paper's point (150 Mb/s, 1056-byte datagrams, ipt = {:.2} µs): \
             w̄_s = {wbar:.0} blocks (mean RTD 35.8 ms + 2.5 ms, half the mean status interval), \
             w_s,max = {wmax:.0} blocks (60 ms + 2.5 ms), b = block error rate, n = destinations.",
            s0.ipt() * 1e6
        ),
            format!(
                "blocks dropped for arriving beyond a reassembly buffer, all runs: {:.0}",
                self.overflow
            ),
        ];
        // The delay to in-order delivery beside the paper's per-block delay (Figure 5).
        let by_window = |name: &str| -> String {
            VARIANTS
                .iter()
                .map(|v| {
                    let pts = self
                        .series
                        .get(&format!("win.{name}.{}", v.name()))
                        .map(|p| fmt_series(p, "", &[]))
                        .unwrap_or_default();
                    format!("{}: {pts}", v.name().to_uppercase())
                })
                .collect::<Vec<_>>()
                .join(" | ")
        };
        notes.push(format!(
            "End-to-end delay by window, ms: to in-order delivery (a block also waits for \
         every block before it; Figure 5 and its claims, `delivery_delay`): {}. Per block \
         to its first arrival, from the source or a local re-multicast (`delay`; with \
         b = 1e-3 it is the propagation delay plus a few hundredths of a ms for every \
         protocol): {}.",
            by_window("delivery_delay"),
            by_window("delay")
        ));
        if ctx.quick() {
            notes.push(format!(
                "quick mode: {} seeds, {} blocks per run, fewer r_f and destination points, no \
             beyond-the-paper runs.",
                plan.seeds, plan.blocks
            ));
        }
        notes
    }
}
