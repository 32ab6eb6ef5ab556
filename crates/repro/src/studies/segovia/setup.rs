//! The study's setup as reported (topology, parameters and the choices the thesis left open):
//! `scenarios/repro/segovia/setup.toml`, filled with the plan's numbers.

use super::plan::{error_increment, Plan, Unstated};
use super::run::{Proto, RunSpec, INCREMENT_ERROR_FREE, RRA_LIMIT};
use crate::study::{Setup, StudyError};
use crate::sweep::join;

pub(super) fn setup(plan: &Plan, u: &Unstated, runs: usize) -> Result<Setup, StudyError> {
    let thousands = |v: u64| {
        let s = v.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    // The fixed values as the runs use them: the thesis's defaults and the bus's rules.
    let thesis = RunSpec::thesis(Proto::Saw, 1, 0);
    let bus = rmcast_sim::BusConfig::default();
    let increments: Vec<String> = [20, 40, 60]
        .iter()
        .map(|&r| thousands(error_increment(r)))
        .collect();
    crate::setup!(
        "segovia",
        &[
            ("jam", bus.jam_bits.to_string()),
            ("slot", bus.slot_bits.to_string()),
            ("attempts", bus.max_attempts.to_string()),
            ("frame", thesis.data_frame.to_string()),
            ("increment_free", thousands(INCREMENT_ERROR_FREE)),
            ("increments", increments.join("/")),
            ("rra_limit", RRA_LIMIT.to_string()),
            ("receivers", join(&plan.rs)),
            ("seeds", plan.seeds.to_string()),
            ("messages", plan.messages.to_string()),
            ("bap_messages", (plan.messages * 9 / 10).to_string()),
            ("runs", runs.to_string()),
            ("err_fails", join(&plan.err_fails)),
            ("err_rs", format!("{:?}", plan.err_rs)),
            ("err_windows", format!("{:?}", plan.err_windows)),
            ("t", thousands(u.t)),
            ("limit", u.limit.to_string()),
            ("saw_limit", u.saw_limit.to_string()),
            (
                "backoff",
                if u.inclusive_backoff {
                    "1: k uniform in 0..=2^min(i,10) (inclusive)".to_string()
                } else {
                    "0: k uniform in 0..2^min(i,10) − 1 (exclusive, IEEE 802.3)".to_string()
                },
            ),
        ]
    )
}
