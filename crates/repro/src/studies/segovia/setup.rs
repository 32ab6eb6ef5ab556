//! The study's setup as reported (topology, parameters and the choices the thesis left open):
//! `scenarios/repro/segovia/setup.toml`, filled with the plan's numbers.

use super::plan::Plan;
use crate::study::{Setup, StudyError};
use crate::sweep::join;

pub(super) fn setup(plan: &Plan, runs: usize) -> Result<Setup, StudyError> {
    crate::setup!(
        "segovia",
        &[
            ("receivers", join(&plan.rs)),
            ("seeds", plan.seeds.to_string()),
            ("messages", plan.messages.to_string()),
            ("bap_messages", (plan.messages * 9 / 10).to_string()),
            ("runs", runs.to_string()),
            ("err_fails", join(&plan.err_fails)),
            ("err_rs", format!("{:?}", plan.err_rs)),
            ("err_windows", format!("{:?}", plan.err_windows)),
        ]
    )
}
