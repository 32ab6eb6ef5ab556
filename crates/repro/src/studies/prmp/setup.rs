//! The study's setup as reported: `scenarios/repro/prmp/setup.toml`, filled with the plan's
//! numbers.

use super::plan::Plan;
use super::run::{PACKETS, PACKET_BYTES};
use crate::study::{Setup, StudyError};

/// How the star's links order packets, read off the links the runs use (so the setup text
/// cannot say FIFO while the links reorder).
pub(super) fn ordering() -> Result<&'static str, StudyError> {
    let t = super::run::star(3, rmcast_sim::topo::LinkClass::Lan).map_err(StudyError::Run)?;
    let reorder = t.net.link(0).map(|(_, _, c)| c.reorder);
    Ok(match reorder {
        Some(true) => {
            "packets may overtake one another (each draws its latency independently, as §4 (g) \
             models it)"
        }
        _ => "FIFO per direction",
    })
}

pub(super) fn setup(plan: &Plan, runs: usize) -> Result<Setup, StudyError> {
    let scale: Vec<String> = plan
        .scale
        .iter()
        .map(|x| crate::claim::fmt_num(*x))
        .collect();
    crate::setup!(
        "prmp",
        &[
            ("runs", runs.to_string()),
            ("lan_sizes", plan.lan.len().to_string()),
            ("hybrid_sizes", plan.hybrid.len().to_string()),
            ("scale", scale.join(", ")),
            ("packets", PACKETS.to_string()),
            ("packet_bytes", PACKET_BYTES.to_string()),
            ("seeds", plan.seeds.to_string()),
            ("ff_seeds", plan.ff_seeds.to_string()),
            ("ordering", ordering()?.to_string()),
        ]
    )
}
