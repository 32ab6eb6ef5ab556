//! The study's setup as reported: `scenarios/repro/lms/setup.toml`, filled with the plan's
//! numbers and the protocols' parameters.

use super::plan::Plan;
use super::{HOST_DELAY, TREE_DELAY};
use crate::study::{Setup, StudyError};
use core::time::Duration;
use rmcast_proto::{lms, pgm, srm};

/// `d` as the setup says it: whole seconds in s, otherwise ms.
fn span(d: Duration) -> String {
    if d >= Duration::from_secs(1) && d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_secs_f64() * 1e3)
    }
}

/// "every `d`", or "none" for a period that is off.
fn every(d: Option<Duration>) -> String {
    d.map_or("none".into(), |d| format!("every {}", span(d)))
}

pub(super) fn setup(plan: &Plan, runs: usize) -> Result<Setup, StudyError> {
    // The protocols' parameters as the runs use them (the spec's defaults, `pgm::Params` …).
    let s = srm::Params::default();
    let p = pgm::Params::default();
    let l = lms::Params::default();
    let srm_large: Vec<_> = plan
        .large
        .iter()
        .filter(|&&(n, r)| plan.srm_large(n, r))
        .collect();
    // The runs' shape: one drop (every family but the adaptive ones) and five.
    let (one, five) = (super::plan::shape(1), super::plan::shape(5));
    let interval = super::sim::INTERVAL;
    let stop = |t: rmcast_proto::Time| span(Duration::from_nanos(t.as_nanos()));
    crate::setup!(
        "lms",
        &[
            ("size", super::sim::SIZE.to_string()),
            ("pps", crate::claim::fmt_num(1.0 / interval.as_secs_f64())),
            (
                "mbps",
                crate::claim::fmt_num(super::sim::BANDWIDTH as f64 / 1e6)
            ),
            ("drop_k", super::sim::DROP_K.to_string()),
            (
                "drop_t",
                crate::claim::fmt_num(interval.as_secs_f64() * (super::sim::DROP_K - 1) as f64,),
            ),
            ("messages", one.messages.to_string()),
            ("messages_5", five.messages.to_string()),
            ("interval_ms", interval.as_millis().to_string()),
            ("stop", stop(one.stop)),
            ("stop_5", stop(five.stop)),
            ("heights", format!("{:?}", plan.heights)),
            ("tree_delay", TREE_DELAY.as_millis().to_string()),
            ("host_delay", HOST_DELAY.as_millis().to_string()),
            ("topologies", plan.topologies.to_string()),
            ("placements", plan.placements.to_string()),
            ("runs", runs.to_string()),
            ("srm_c1", s.c1.to_string()),
            ("srm_c2", s.c2.to_string()),
            ("srm_d1", s.d1.to_string()),
            ("srm_d2", s.d2.to_string()),
            ("srm_backoff_limit", s.backoff_limit.to_string()),
            ("srm_session", every(s.session_interval)),
            ("pgm_nak_backoff", span(p.nak_backoff)),
            ("pgm_nak_repeat", span(p.nak_repeat)),
            ("pgm_nak_rdata", span(p.nak_rdata)),
            ("pgm_spm", every(p.spm_interval)),
            ("pgm_repair_delay", span(p.repair_delay)),
            ("lms_replier", l.replier.word().to_string()),
            ("lms_request_timeout", span(l.request_timeout)),
            ("lms_heartbeat", every(l.heartbeat)),
            ("lms_refresh_packets", l.refresh_packets.to_string()),
            ("large", format!("{:?}", plan.large)),
            ("large_sites", plan.large_sites.to_string()),
            (
                "srm_large_max_receivers",
                plan.srm_large_max_receivers.to_string()
            ),
            ("srm_large", format!("{srm_large:?}")),
            (
                "routing",
                if plan.hop_routes {
                    "fewest hops (`hop_routes` = 1), ties by least delay, then the \
                     lowest-numbered parent node"
                } else {
                    "least delay (`hop_routes` = 0)"
                }
                .to_string()
            ),
            ("variant_site_cap", plan.variant_site_cap.to_string()),
        ]
    )
}
