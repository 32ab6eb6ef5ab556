//! `segovia`: seed 000 (Segovia 1996) — multicast stop-and-wait (MSAW) and block
//! acknowledgment (MBAP) on one shared 10 Mb/s Ethernet, Tables 4.1–4.13, plus the
//! round-robin acknowledgment protocol (RRA) the thesis proposed but never built.
//!
//! Every run is one sender and `r` receivers on `rmcast_sim`'s bus (seed 000 §3: frame time
//! 8 × bytes bit times, no gap, no propagation delay, 1-persistent deferral, 32-bit-time
//! collisions, truncated binary exponential backoff in 512-bit slots, 16 attempts), driven
//! by `rmcast_proto::{saw, bap, rra}` with a saturated source. Per-record metrics are those of
//! [`metrics`] (means of per-record ratios, block records for MBAP). Failure rates are
//! Bernoulli drops on transmit and on receive at every interface.
//!
//! The study reads as: `run` (one run on the bus), `plan` (the families of runs per table),
//! this file (the study's phases: plan, run, measure, plot), `measure` (what is measured from
//! the runs), `plots`, `setup` and `notes` (the report's figures and text).

mod measure;
pub mod metrics;
mod mutants;
mod notes;
mod plan;
mod plots;
mod run;
mod setup;
#[cfg(test)]
mod tests;

pub use plan::error_increment;
pub use run::*;

use crate::sampling::Feed;
use crate::study::{About, RunCtx, Study, StudyError, StudyOutput};
use crate::sweep::{point_seed, Agg, Sweep};
use crate::Measures;
use measure::Checks;
use plan::Plan;

/// The seed 000 study.
pub struct Segovia;

/// Run every family at each of its x, `seeds` runs per x and more where a claim on the
/// family's measures is undecided (sequential sampling; run seeds derived from `salt`, the
/// family's index, x and the run's number).
fn run_families(
    ctx: &RunCtx<'_>,
    fams: &[plan::Family],
    salt: u64,
    seeds: u64,
) -> Result<(Sweep<RunSpec>, Vec<RunOut>), StudyError> {
    let mutant = ctx.mutant_of(mutants::MUTANTS);
    Sweep::sampled(
        ctx,
        fams,
        |f| (f.xs.as_slice(), seeds),
        |i, f, x, k| {
            let mut s = (f.make)(&f.cfg, x, point_seed(i as u64 ^ salt, x, k));
            mutants::apply(mutant, &mut s);
            s
        },
        |f, x| vec![Feed::at(format!("{}.*", f.key), x)],
        |s| s.receivers as u64,
        |s| run_one(s, false),
    )
}

impl Study for Segovia {
    /// Its wall time in the full run of 2026-11-29 (sharing two cores), in seconds.
    fn cost_hint(&self) -> u32 {
        139
    }

    fn mutants(&self) -> Vec<crate::Mutant> {
        mutants::MUTANTS.to_vec()
    }

    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        let plan = Plan::for_ctx(ctx);
        let unstated = plan::Unstated::from_ctx(ctx).map_err(StudyError::Run)?;
        let fams = plan.families(&unstated);
        // The mode's runs per point; sequential sampling applies the runs factor.
        let seeds = Plan::new(ctx.sweeps).seeds;
        let (sweep, results) = run_families(ctx, &fams, 0x5e60_0000, seeds)?;
        let mut agg = Agg::new();
        let checks = Checks::of(&fams, &sweep, &results, &mut agg)?;
        let smallest = measure::smallest_increments(&fams, &agg);
        // MSAW's error tables with those increments (a second sweep: it needs the first).
        let found = measure::saw_increments(&smallest);
        let proc_fams = plan.procedure_families(&found, &unstated);
        let (sweep2, results2) = run_families(ctx, &proc_fams, 0x5e60_1000, seeds)?;
        measure::aggregate(&proc_fams, &sweep2, &results2, &mut agg)?;

        let mut m = Measures::new();
        agg.record(&mut m, measure::unit_of);
        measure::record_increments(smallest, &mut m);
        checks.record(&mut m)?;
        measure::analytic_bounds(&mut m);
        measure::frames(&mut m)?;
        measure::peaks(&agg, &mut m)?;
        checks.error_ratios(&fams, &plan, &mut m)?;

        let plots = plots::plots(ctx, &agg, &m)?;
        let setup = setup::setup(&plan, &unstated, sweep.len())?;
        let notes = notes::notes(ctx, &plan, &fams, &agg, &checks);
        Ok(StudyOutput {
            setup,
            measures: m,
            plots,
            notes,
        })
    }

    fn about(&self) -> About {
        crate::about!(
            "segovia",
            "Multicast stop-and-wait and block acknowledgment on a shared Ethernet (Segovia 1996)",
            "seed 000 (Segovia 1996, MSc thesis): §4.1 bounds, Tables 4.1–4.13; RRA from Ch. 5",
        )
    }
}
