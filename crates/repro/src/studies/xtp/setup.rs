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
    let loopback_runs = match &net.loopback_skipped {
        Some(why) => format!("skipped: {why}"),
        None => net.loopback_runs.to_string(),
    };
    // The fixed values as the runs use them: the two settings' configurations and the bus.
    let (node, rx) = (rmcast_proto::NodeId(0), vec![rmcast_proto::NodeId(1)]);
    let thesis = super::Setting::Thesis.config(node, rx.clone(), true);
    let improved = super::Setting::Improved.config(node, rx, true);
    let secs = |d: core::time::Duration| crate::claim::fmt_num(d.as_secs_f64());
    crate::setup!(
        "xtp",
        &[
            ("framing", super::sim::FRAME_OVERHEAD.to_string()),
            (
                "net_wtimer_ms",
                crate::claim::fmt_num(
                    rmcast_proto::xtp::WtimerConfig::default()
                        .initial
                        .as_secs_f64()
                        * 1e3,
                ),
            ),
            ("ctimeout_s", secs(thesis.ctimeout)),
            ("maxdata", thesis.maxdata.to_string()),
            ("window", thesis.window.to_string()),
            (
                "cap_s",
                improved.wtimer.cap.map(secs).unwrap_or_else(|| "∞".into()),
            ),
            (
                "sreq_every",
                improved
                    .sreq_every
                    .map(|n| n.to_string())
                    .unwrap_or_else(|| "never".into()),
            ),
            ("improved_ctimeout_s", secs(improved.ctimeout)),
            ("writes", join(&plan.writes)),
            ("reps", plan.reps.to_string()),
            ("runs", runs.to_string()),
            ("loopback_runs", loopback_runs),
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
