//! `xtp`: seed 002 (Johnstone & Williams 1997) — reliable multicast with the Xpress Transport
//! Protocol, measured with SandiaXTP's `metric` on four workstations on one 10 Mb/s Ethernet.
//!
//! **Simulation** (`sim.*` measures): one sender and 1–3 receivers on `rmcast_sim`'s seed-000
//! Ethernet bus (10 Mb/s, 1-persistent CSMA/CD, binary exponential backoff), driven by
//! `rmcast_proto::xtp`. The application is the thesis's `metric`: it sends a 51,200- or
//! 1,024,000-byte message in writes of 64–8192 bytes; each write call first costs
//! [`PER_CALL_COST`] (the user-space daemon's per-call cost on the 1997 SPARCs, derived from the
//! thesis's Appendix) and then blocks until every receiver holds the write (block on
//! acknowledgment). One receiver drops 0, 1/25, 1/10 or 1/5 of the packets it receives.
//! Timing runs from the start (FIRST) to the last write's acknowledgment; throughput is
//! message bytes × 8 / timing, as in the thesis. A run that CTIMEOUT aborts has failed and is
//! left out of the throughput averages, as the thesis did.
//!
//! **Real network** (`net.*` measures, see `xtp_net.rs`): the same agent through
//! `rmcast-net` on this machine's loopback interface, real UDP multicast sockets, loss injected
//! on receive at one receiver, no modelled per-call cost.
//!
//! Two protocol settings: `thesis` (go-back-N, uncapped WTIMER back-off, no periodic SREQ,
//! CTIMEOUT 60 s) and `improved` (the thesis's recommendations: selective repeat, back-off
//! capped at 1 s, an SREQ every 8 packets; CTIMEOUT stays 60 s).

//!
//! The study reads as: [`super::xtp_grid`] (the thesis's grid, shared with `xtp_net`),
//! [`sim`] (one simulated run), `plan` (the cells to run), this file (what is measured),
//! `plots` and `setup`. The real-network part lives in [`super::xtp_net`], which needs only
//! the grid: `xtp` imports `xtp_net` and both import `xtp_grid`, never the reverse.

mod measure;
mod mutants;
mod plan;
mod plots;
mod setup;
pub mod sim;
#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

pub use super::xtp_grid::*;
pub use sim::*;

use crate::study::{About, RunCtx, Study, StudyError, StudyOutput};
use crate::Measures;
use core::time::Duration;
use measure::Grid;
use plan::Plan;

/// The seed 002 study.
pub struct Xtp;

/// A grid column: setting, message, method, loss key.
type GroupKey = (Setting, u64, Mode, u32);

/// Series name of a grid cell's measure.
pub fn key(setting: Setting, message: u64, mode: Mode, loss: u32) -> String {
    format!(
        "sim.{}.{}.{}.l{}",
        setting.key(),
        msg_key(message),
        mode.key(),
        loss
    )
}

/// The simulation's model, with its two unstated constants (setup.toml's `[[unstated]]`),
/// which `--explore` may vary.
fn model(ctx: &RunCtx<'_>) -> Result<sim::Model, StudyError> {
    let model = sim::Model {
        per_call: Duration::from_secs_f64(
            ctx.param("per_call_ms", sim::PER_CALL_COST.as_secs_f64() * 1e3) / 1e3,
        ),
        wtimer: Duration::from_secs_f64(
            ctx.param("wtimer_ms", sim::WTIMER_FLOOR.as_secs_f64() * 1e3) / 1e3,
        ),
        ..sim::Model::default()
    };
    if model.per_call.is_zero() || model.wtimer.is_zero() {
        return Err(StudyError::Run(
            "per_call_ms and wtimer_ms must be positive".into(),
        ));
    }
    Ok(model)
}

impl Study for Xtp {
    /// Its namespace runs (`xtp_net`) time real transfers.
    fn runs_alone(&self) -> bool {
        true
    }

    fn mutants(&self) -> Vec<crate::Mutant> {
        mutants::MUTANTS.to_vec()
    }

    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        let plan = Plan::for_ctx(ctx);
        let mutant = ctx.mutant_of(mutants::MUTANTS);
        let model = mutants::apply_model(mutant, model(ctx)?);
        let cells = plan.cells();
        let run = |c: &sim::Cell| run_sim_with(&mutants::apply(mutant, *c), &model);
        let results: Vec<RunOut> = ctx.try_map(&cells, run)?;
        let scale = plan.scale_cells();
        let scale_out: Vec<RunOut> = ctx.try_map(&scale, run)?;

        let mut m = Measures::new();
        let mut notes = Vec::new();
        let grid = Grid::record(&cells, &results, &mut m);
        grid.record_tables(&plan, &mut m);
        let runs = measure::Runs {
            cells: &cells,
            results: &results,
        };
        notes.push(runs.record_small_write_failures(&mut m));
        notes.push(measure::calibration_note(ctx, &m)?);
        grid.record_loss_change(&plan, &mut m);
        notes.push(runs.record_failures(&mut m));
        notes.extend(grid.record_ratios(&plan, &mut m));
        notes.extend(measure::record_scale(&scale, &scale_out, &mut m));

        // Real network: loopback, then namespace hosts.
        let net = super::xtp_net::run(ctx, &mut m, &mut notes)?;

        let plots = plots::plots(ctx, &m)?;
        Ok(StudyOutput {
            setup: setup::setup(&plan, cells.len() + scale.len(), &net, &model)?,
            measures: m,
            plots,
            notes,
        })
    }

    fn about(&self) -> About {
        crate::about!(
            "xtp",
            "Seed 002: XTP-style transmitter-driven reliable multicast (Johnstone & Williams 1997)",
            "seed 002: G. S. Johnstone and G. D. Williams, Applied Reliable Multicast Using the \
             Xpress Transport Protocol (XTP), M.S. thesis, Naval Postgraduate School, 1997",
        )
    }
}

/// The smallest of `cells` over `base`; `None` if the base, any cell or every cell is
/// missing (a missing cell is not a collapse to zero).
pub fn min_ratio(base: Option<f64>, cells: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let base = base?;
    cells
        .map(|c| c.map(|v| v / base))
        .collect::<Option<Vec<f64>>>()?
        .into_iter()
        .reduce(f64::min)
}

/// (max − min) / mean.
pub fn spread(v: &[f64]) -> f64 {
    let max = v.iter().copied().fold(f64::MIN, f64::max);
    let min = v.iter().copied().fold(f64::MAX, f64::min);
    let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
    if mean > 0.0 {
        (max - min) / mean
    } else {
        0.0
    }
}
