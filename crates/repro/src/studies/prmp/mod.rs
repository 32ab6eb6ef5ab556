//! `prmp`: seed 004 (Barcellos & Ezhilchelvan) — polling-based reliable multicast (PF, PF-IW)
//! against full-feedback protocols (FF, FF-IW, FF-IW-IT) on the star configurations of §4,
//! Figures 5–11, then beyond the paper: thousands of receivers and the multi-level tree
//! version on a transit–stub graph.
//!
//! Every paper run is one parent and `NC` children, each child on its own link of a Table 1
//! class (`rmcast_sim::topo::star`): one-way latency Normal(L, SD) per packet, independent
//! Bernoulli losses at `Err` on every packet kind in both directions, no bandwidth limit.
//! Implosion is the simulator's host receive queue at the parent: 16 packets served at
//! ITR = 1500/s (off for FF-IW-IT). The parent sends 1000 packets of 1 KB from a ready
//! source; children consume at once. T, N and I are computed as §4 defines them:
//! `T = DP/Δt` (packets/ms, from the first DATA to the last packet fully acknowledged),
//! `N = TP/(NC·DP)` with `TP` every packet crossing a parent–child link (a multicast counts
//! once per child, lost copies included), `I` = implosion losses / `(NC·DP)`.

//!
//! The study reads as: [`run`] (one star run) and [`tree`] (one transit–stub run), `plan`
//! (the families of runs), this file (what is recorded from them), `derived` (the measures
//! and notes computed from the series), `plots` and `setup`.

mod derived;
mod mutants;
mod plan;
mod plots;
pub mod run;
mod setup;
#[cfg(test)]
mod tests;
pub mod tree;

pub use run::*;
pub use tree::*;

use crate::sampling::Feed;
use crate::study::{About, RunCtx, Study, StudyError, StudyOutput};
use crate::sweep::{est, point_seed, Agg, Column, Sweep};
use crate::Measures;
use core::time::Duration;
use plan::Plan;
use rmcast_proto::rng::mix64;

/// The seed 004 study.
pub struct Prmp;

/// What is recorded per star run, as `<family>.<name>.<protocol>` series.
const COLUMNS: [Column<RunOut>; 9] = [
    ("t", |o| o.t),
    ("n", |o| o.n),
    ("i", |o| o.i),
    ("feedback", |o| o.feedback),
    ("finished", |o| f64::from(u8::from(o.finished))),
    ("delivery_ok", |o| f64::from(u8::from(o.delivery_ok))),
    ("evicted", |o| o.evicted as f64),
    ("acked", |o| o.acked as f64),
    ("events", |o| o.events as f64),
];

/// What is recorded per tree run, as `tree.<name>.<single|multi>` series.
const TREE_COLUMNS: [Column<TreeOut>; 8] = [
    ("t", |o| o.t),
    ("hops", |o| o.hops),
    ("i", |o| o.i),
    ("root_feedback", |o| o.root_feedback),
    ("relays", |o| o.relays as f64),
    ("finished", |o| f64::from(u8::from(o.finished))),
    ("delivery_ok", |o| f64::from(u8::from(o.delivery_ok))),
    ("events", |o| o.events as f64),
];

fn unit_of(name: &str) -> (&'static str, &'static str) {
    let xl = if name.starts_with("rr.") {
        "RR (responses/s)"
    } else if name.starts_with("tree.") {
        "NC (receivers)"
    } else {
        "NC (children)"
    };
    let metric = name.split('.').nth(1).unwrap_or("");
    let unit = match metric {
        "t" => "packets/ms",
        "n" | "i" | "feedback" => "dimensionless",
        "hops" => "link transmissions per receiver per packet",
        "root_feedback" => "packets at the source per data packet",
        "relays" => "relays",
        "finished" | "delivery_ok" => "fraction of runs",
        "evicted" => "children",
        "acked" => "packets",
        "events" => "simulator events",
        _ => "",
    };
    (unit, xl)
}

impl Study for Prmp {
    /// Its wall time in the full run of 2026-11-29 (sharing two cores), in seconds.
    fn cost_hint(&self) -> u32 {
        264
    }

    fn mutants(&self) -> Vec<crate::Mutant> {
        mutants::MUTANTS.to_vec()
    }

    fn run(&self, ctx: &RunCtx<'_>) -> Result<StudyOutput, StudyError> {
        // The mode's runs per point (`Plan::new`: sequential sampling applies the runs
        // factor and adds runs where a claim is undecided).
        let plan = Plan::new(ctx.sweeps);
        let mutant = ctx.mutant_of(mutants::MUTANTS);
        let fams = plan.families();
        // A point feeds its configuration's measures of its protocol, and the differences
        // and subsets derived from them. The largest runs start first.
        let (sweep, results) = Sweep::sampled(
            ctx,
            &fams,
            |f| (f.xs.as_slice(), f.seeds),
            |i, f, x, k| {
                let mut s = (f.make)(f.proto, x, point_seed(i as u64 ^ 0x0004_0000, x, k));
                mutants::apply(mutant, &mut s);
                s
            },
            |f, x| {
                let (c, p) = (f.key, f.proto.key());
                vec![
                    Feed::at(format!("{c}.*.{p}"), x),
                    Feed::at(format!("{c}.*.{p}.*"), x),
                    Feed::at(format!("{c}.*.{p}_minus_*"), x),
                    Feed::at(format!("{c}.*.*_minus_{p}"), x),
                ]
            },
            |s| s.nc as u64,
            run_one,
        )?;

        // Beyond the paper: single-level against multi-level PRMP on transit–stub graphs,
        // the same graphs and receiver placements for both versions.
        let versions = [false, true];
        let (trees, touts) = Sweep::sampled(
            ctx,
            &versions,
            |_| (plan.tree.as_slice(), plan.tree_seeds),
            |_, &multi, x, k| TreeSpec {
                nc: x as usize,
                multi: mutants::multi(mutant, multi),
                packets: PACKETS,
                limit: Duration::from_secs(600),
                seed: mix64(0x7ee0_0000 ^ x.to_bits() ^ k),
            },
            |&multi, x| {
                let key = if multi { "multi" } else { "single" };
                vec![Feed::at(format!("tree.*.{key}"), x)]
            },
            |s| s.nc as u64,
            run_tree,
        )?;

        let mut agg = Agg::new();
        let mut bad: Vec<String> = Vec::new();
        for multi in [false, true] {
            let key = if multi { "multi" } else { "single" };
            for &x in &plan.tree {
                let runs = trees.runs_at(&touts, usize::from(multi), x);
                let outs: Vec<&TreeOut> = runs.iter().map(|(_, o)| *o).collect();
                agg.columns(&outs, x, &TREE_COLUMNS, |c| format!("tree.{c}.{key}"))?;
                for (j, o) in &runs {
                    if !o.delivery_ok {
                        bad.push(format!("tree {key} NC={} seed {:#x}", j.nc, j.seed));
                    }
                }
            }
        }
        let mut unfinished: Vec<String> = Vec::new();
        for (fi, f) in fams.iter().enumerate() {
            for &x in &f.xs {
                let runs = sweep.runs_at(&results, fi, x);
                let outs: Vec<&RunOut> = runs.iter().map(|(_, o)| *o).collect();
                let p = f.proto.key();
                agg.columns(&outs, x, &COLUMNS, |c| format!("{}.{c}.{p}", f.key))?;
                for (s, o) in &runs {
                    if !o.delivery_ok {
                        bad.push(format!("{} {} NC={} seed {:#x}", f.key, p, s.nc, s.seed));
                    }
                    if !o.finished {
                        unfinished.push(format!(
                            "{} {} x={x} ({} of {} packets acknowledged in {} s)",
                            f.key,
                            f.proto.label(),
                            o.acked,
                            s.packets,
                            s.limit.as_secs()
                        ));
                    }
                }
            }
        }

        let mut m = Measures::new();
        agg.record(&mut m, unit_of);
        derived::derived(&mut m, &agg, &plan)?;
        let all_ok: Vec<f64> = results
            .iter()
            .map(|o| o.delivery_ok)
            .chain(touts.iter().map(|o| o.delivery_ok))
            .map(|ok| f64::from(u8::from(ok)))
            .collect();
        m.scalar("runs.delivery_ok", "fraction of runs", est(&all_ok)?);
        let paper_finished: Vec<f64> = sweep
            .specs()
            .into_iter()
            .zip(&results)
            .filter(|(s, _)| s.limit.as_secs() == 3600)
            .map(|(_, o)| f64::from(u8::from(o.finished)))
            .collect();
        m.scalar(
            "runs.paper_finished",
            "fraction of runs",
            est(&paper_finished)?,
        );

        let plots = plots::plots(ctx, &agg)?;
        let mut notes = derived::notes(&agg, &Plan::for_ctx(ctx));
        if !bad.is_empty() {
            notes.push(format!(
                "Runs whose delivery check failed (a child that was not removed did not deliver \
                 every packet, or delivered more): {}.",
                bad.join("; ")
            ));
        }
        if !unfinished.is_empty() {
            notes.push(format!(
                "Runs that did not finish within their simulated-time limit: {}.",
                unfinished.join("; ")
            ));
        }
        Ok(StudyOutput {
            setup: setup::setup(&Plan::for_ctx(ctx), sweep.len())?,
            measures: m,
            plots,
            notes,
        })
    }

    fn about(&self) -> About {
        crate::about!(
            "prmp",
            "Polling-based reliable multicast (PRMP) against full feedback (Barcellos & Ezhilchelvan)",
            "seed 004 (Barcellos & Ezhilchelvan): §2–3 protocol, §4 Table 1 and Figures 5–11; \
             beyond: 100–10,000 children and the multi-level tree version",
        )
    }
}
