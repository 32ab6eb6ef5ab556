//! The study's notes: how many runs each point averages, the runs that failed a check, and
//! the measured series beside the thesis's for the reader.

use super::measure::Checks;
use super::plan::{Family, Plan};
use super::plots::paper_err_key;
use crate::study::RunCtx;
use crate::sweep::{fmt_series, Agg};

/// The notes of a run of the study with families `fams`.
pub(super) fn notes(
    ctx: &RunCtx<'_>,
    plan: &Plan,
    fams: &[Family],
    agg: &Agg,
    checks: &Checks,
) -> Vec<String> {
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
             {} ({}).",
            checks.failed_any_free,
            checks.free_fail_runs.join("; ")
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
    if !checks.bad_runs.is_empty() {
        notes.push(format!(
            "Runs whose delivery check failed (a receiver missed a message the sender \
             did not give up on, or got one twice or out of order; sens.* runs are \
             sensitivity variants, counted apart in runs.sens_delivery_ok, {} of {} \
             runs delivered; where the sender gives up on many messages, bap's receiver \
             can skip past them only while it lags by fewer than n, its sequence numbers \
             being modulo 2n, and saw's 1-bit sequence number cannot tell a missed \
             given-up message from a duplicate, so a receiver then misses or misnumbers \
             later messages): {}.",
            checks.sens_ok.iter().filter(|&&v| v == 1.0).count(),
            checks.sens_ok.len(),
            checks.bad_runs.join("; ")
        ));
    }
    if ctx.quick() {
        notes.push(format!(
            "Quick mode: fewer receiver counts, {} seeds, {} messages (180 for BAP), \
             error experiments at r = 20 and 0–1 % only, window 10 only.",
            plan.seeds, plan.messages
        ));
    }
    notes
}
