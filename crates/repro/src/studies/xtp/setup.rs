//! The study's setup as reported: `scenarios/repro/xtp/setup.toml`, filled with the plan's
//! numbers and what the real-network part ran.

use super::plan::Plan;
use crate::studies::xtp_net::NetSummary;
use crate::study::{Setup, StudyError};
use crate::sweep::join;

pub(super) fn setup(
    plan: &Plan,
    runs: usize,
    net: &NetSummary,
    model: &super::sim::Model,
) -> Result<Setup, StudyError> {
    let ns_runs = match &net.ns_skipped {
        Some(why) => format!("skipped: {why}"),
        None => format!("{} (up to {} receivers)", net.ns_runs, net.ns_max_receivers),
    };
    crate::setup!(
        "xtp",
        &[
            ("writes", join(&plan.writes)),
            ("reps", plan.reps.to_string()),
            ("runs", runs.to_string()),
            ("loopback_runs", net.loopback_runs.to_string()),
            ("ns_runs", ns_runs),
            ("scale_receivers", join(&plan.scale_ns)),
            (
                "per_call_ms",
                crate::claim::fmt_num(model.per_call.as_secs_f64() * 1e3),
            ),
            (
                "wtimer_ms",
                crate::claim::fmt_num(model.wtimer.as_secs_f64() * 1e3),
            ),
        ]
    )
}
